"""Model specs → autogen ``ChatCompletionClient``s, with per-role generation settings.

This is the thin boundary to AutoGen's model layer: protocols never see a provider SDK. ``spec`` holds the spec
syntax and the provider table; one module per provider builds its client (``llama``, ``openai``, ``scripted``,
``human``) on what ``base`` shares; ``settings`` holds the per-role settings and TOML role config; ``pool`` the
clients of one run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from voirdire.base import lazy_face

if TYPE_CHECKING:
    from voirdire.base import mask_secrets as mask_secrets, redact_url as redact_url
    from voirdire.models.base import (
        DEFAULT_MAX_TOKENS as DEFAULT_MAX_TOKENS,
        OVERLOAD_STATUS as OVERLOAD_STATUS,
        TIMEOUT_ARG as TIMEOUT_ARG,
        Completion as Completion,
        InvalidReply as InvalidReply,
        ModelConnectionError as ModelConnectionError,
        ModelSpecError as ModelSpecError,
        ReplyTimeout as ReplyTimeout,
        TextOnlyClient as TextOnlyClient,
        TransientModelError as TransientModelError,
        asks_to_wait as asks_to_wait,
        text_of as text_of,
    )
    from voirdire.models.encoders import (
        DEVICES as DEVICES,
        Device as Device,
        cross_encoder as cross_encoder,
        pick_device as pick_device,
        sentence_encoder as sentence_encoder,
    )
    from voirdire.models.human import BEFORE_PROMPT as BEFORE_PROMPT, HumanClient as HumanClient
    from voirdire.models.limiter import endpoint_limits as endpoint_limits
    from voirdire.models.llama import (
        EMBEDDED_MODEL as EMBEDDED_MODEL,
        LlamaCppClient as LlamaCppClient,
        embedded_model_path as embedded_model_path,
    )
    from voirdire.models.openai import preload_http as preload_http
    from voirdire.models.pool import ModelPool as ModelPool
    from voirdire.models.replay import ReplayMissing as ReplayMissing, replay_dir as replay_dir
    from voirdire.models.scripted import (
        Script as Script,
        ScriptedChatCompletionClient as ScriptedChatCompletionClient,
        ScriptExhausted as ScriptExhausted,
        ScriptRule as ScriptRule,
    )
    from voirdire.models.settings import RoleSettings as RoleSettings, load_role_config as load_role_config
    from voirdire.models.spec import (
        PROVIDERS as PROVIDERS,
        SLASH_KINDS as SLASH_KINDS,
        ModelSpec as ModelSpec,
        Provider as Provider,
        build_client as build_client,
        parse_spec as parse_spec,
        resolve_api_key as resolve_api_key,
        spec_label as spec_label,
    )

# Every name re-exported above (`X as X`) is exported, imported at its first use (voirdire.base.faces).
__getattr__, __dir__, __all__ = lazy_face(__name__)
