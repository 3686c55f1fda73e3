"""Model specs → autogen ``ChatCompletionClient``s, with per-role generation settings.

This is the thin boundary to AutoGen's model layer: protocols never see a provider SDK. ``spec`` holds the spec
syntax and the provider table; one module per provider builds its client (``llama``, ``openai``, ``scripted``,
``human``) on what ``base`` shares; ``settings`` holds the per-role settings and TOML role config; ``pool`` the
clients of one run.
"""

from __future__ import annotations

from voirdire.models.base import DEFAULT_MAX_TOKENS, InvalidReply, ModelSpecError, ReplyTimeout, TransientModelError
from voirdire.models.human import HumanClient
from voirdire.models.llama import EMBEDDED_MODEL, LlamaCppClient, embedded_model_path
from voirdire.models.pool import ModelPool
from voirdire.models.scripted import Script, ScriptedChatCompletionClient, ScriptExhausted, ScriptRule
from voirdire.models.settings import RoleSettings, load_role_config
from voirdire.models.spec import (
    PROVIDERS,
    ModelSpec,
    Provider,
    build_client,
    parse_spec,
    resolve_api_key,
    spec_label,
)
from voirdire.secrets import mask_secrets, redact_url

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "EMBEDDED_MODEL",
    "PROVIDERS",
    "HumanClient",
    "InvalidReply",
    "LlamaCppClient",
    "ModelPool",
    "ModelSpec",
    "ModelSpecError",
    "Provider",
    "ReplyTimeout",
    "RoleSettings",
    "Script",
    "ScriptExhausted",
    "ScriptRule",
    "ScriptedChatCompletionClient",
    "TransientModelError",
    "build_client",
    "embedded_model_path",
    "load_role_config",
    "mask_secrets",
    "parse_spec",
    "redact_url",
    "resolve_api_key",
    "spec_label",
]
