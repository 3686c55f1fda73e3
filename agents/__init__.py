"""voirdire.agents: the roles as autogen-agentchat agents.

LLM-backed roles (examiner, examinee, oracle, evaluator, improver) are ``ModelAgent``s over any autogen
``ChatCompletionClient``; deterministic roles (rule verifiers, decision trees) are ``FunctionAgent``s.
"""

from typing import TYPE_CHECKING

from voirdire.base import lazy_face

if TYPE_CHECKING:
    from voirdire.agents.function_agent import FunctionAgent as FunctionAgent
    from voirdire.agents.model_agent import (
        ROLE_KEY as ROLE_KEY,
        SEED_KEY as SEED_KEY,
        TEMPERATURE_KEY as TEMPERATURE_KEY,
        CallInfo as CallInfo,
        CallSharing as CallSharing,
        ModelAgent as ModelAgent,
        ModelCallError as ModelCallError,
        call_metadata as call_metadata,
        message_id as message_id,
    )

# Every name re-exported above (`X as X`) is exported, imported at its first use (voirdire.base.faces).
__getattr__, __dir__, __all__ = lazy_face(__name__)
