"""Model specs → autogen ``ChatCompletionClient``s, with per-role generation settings.

This is the thin boundary to AutoGen's model layer: protocols never see a provider SDK. ``spec`` holds the spec
syntax and the provider table; one module per provider builds its client (``llama``, ``openai``, ``scripted``,
``human``) on what ``base`` shares; ``settings`` holds the per-role settings and TOML role config; ``pool`` the
clients of one run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from voirdire.base import lazy_face, mask_secrets, redact_url

if TYPE_CHECKING:
    from voirdire.models.base import (
        DEFAULT_MAX_TOKENS,
        OVERLOAD_STATUS,
        TIMEOUT_ARG,
        Completion,
        InvalidReply,
        ModelConnectionError,
        ModelSpecError,
        ReplyTimeout,
        TextOnlyClient,
        TransientModelError,
        asks_to_wait,
        text_of,
    )
    from voirdire.models.encoders import DEVICES, Device, cross_encoder, pick_device, sentence_encoder
    from voirdire.models.human import BEFORE_PROMPT, HumanClient
    from voirdire.models.limiter import endpoint_limits
    from voirdire.models.llama import EMBEDDED_MODEL, LlamaCppClient, embedded_model_path
    from voirdire.models.openai import preload_http
    from voirdire.models.pool import ModelPool
    from voirdire.models.replay import ReplayMissing, replay_dir
    from voirdire.models.scripted import Script, ScriptedChatCompletionClient, ScriptExhausted, ScriptRule
    from voirdire.models.settings import RoleSettings, load_role_config
    from voirdire.models.spec import (
        PROVIDERS,
        SLASH_KINDS,
        ModelSpec,
        Provider,
        build_client,
        parse_spec,
        resolve_api_key,
        spec_label,
    )

# What runs: each name's module is imported at the name's first use (voirdire.base.faces).
__getattr__ = lazy_face(
    __name__,
    {
        "voirdire.models.base": (
            "DEFAULT_MAX_TOKENS", "OVERLOAD_STATUS", "TIMEOUT_ARG", "Completion", "InvalidReply",
            "ModelConnectionError", "ModelSpecError", "ReplyTimeout", "TextOnlyClient", "TransientModelError",
            "asks_to_wait", "text_of",
        ),
        "voirdire.models.encoders": ("DEVICES", "Device", "cross_encoder", "pick_device", "sentence_encoder"),
        "voirdire.models.human": ("BEFORE_PROMPT", "HumanClient"),
        "voirdire.models.limiter": ("endpoint_limits",),
        "voirdire.models.llama": ("EMBEDDED_MODEL", "LlamaCppClient", "embedded_model_path"),
        "voirdire.models.pool": ("ModelPool",),
        "voirdire.models.replay": ("ReplayMissing", "replay_dir"),
        "voirdire.models.scripted": ("Script", "ScriptedChatCompletionClient", "ScriptExhausted", "ScriptRule"),
        "voirdire.models.settings": ("RoleSettings", "load_role_config"),
        "voirdire.models.spec": (
            "PROVIDERS", "SLASH_KINDS", "ModelSpec", "Provider", "build_client", "parse_spec", "resolve_api_key",
            "spec_label",
        ),
        "voirdire.models.openai": ("preload_http",),
    },
)

__all__ = [
    "BEFORE_PROMPT",
    "DEFAULT_MAX_TOKENS",
    "DEVICES",
    "EMBEDDED_MODEL",
    "OVERLOAD_STATUS",
    "PROVIDERS",
    "SLASH_KINDS",
    "TIMEOUT_ARG",
    "Completion",
    "Device",
    "HumanClient",
    "InvalidReply",
    "LlamaCppClient",
    "ModelConnectionError",
    "ModelPool",
    "ModelSpec",
    "ModelSpecError",
    "Provider",
    "ReplayMissing",
    "ReplyTimeout",
    "RoleSettings",
    "Script",
    "ScriptExhausted",
    "ScriptRule",
    "ScriptedChatCompletionClient",
    "TextOnlyClient",
    "TransientModelError",
    "asks_to_wait",
    "build_client",
    "cross_encoder",
    "embedded_model_path",
    "endpoint_limits",
    "load_role_config",
    "mask_secrets",
    "parse_spec",
    "pick_device",
    "preload_http",
    "redact_url",
    "replay_dir",
    "resolve_api_key",
    "sentence_encoder",
    "spec_label",
    "text_of",
]
