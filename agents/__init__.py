"""voirdire.agents: the roles as autogen-agentchat agents.

LLM-backed roles (examiner, examinee, oracle, evaluator, improver) are ``ModelAgent``s over any autogen
``ChatCompletionClient``; deterministic roles (rule verifiers, decision trees) are ``FunctionAgent``s.
"""

from typing import TYPE_CHECKING

from voirdire.base import lazy_face

if TYPE_CHECKING:
    from voirdire.agents.function_agent import FunctionAgent
    from voirdire.agents.model_agent import (
        ROLE_KEY,
        SEED_KEY,
        TEMPERATURE_KEY,
        CallInfo,
        CallSharing,
        ModelAgent,
        ModelCallError,
        call_metadata,
        message_id,
    )

# What runs: each name's module is imported at the name's first use (voirdire.base.faces).
__getattr__ = lazy_face(
    __name__,
    {
        "voirdire.agents.function_agent": ("FunctionAgent",),
        "voirdire.agents.model_agent": (
            "ROLE_KEY", "SEED_KEY", "TEMPERATURE_KEY", "CallInfo", "CallSharing", "ModelAgent", "ModelCallError",
            "call_metadata", "message_id",
        ),
    },
)

__all__ = [
    "ROLE_KEY",
    "SEED_KEY",
    "TEMPERATURE_KEY",
    "CallInfo",
    "CallSharing",
    "FunctionAgent",
    "ModelAgent",
    "ModelCallError",
    "call_metadata",
    "message_id",
]
