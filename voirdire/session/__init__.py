"""What a paper's algorithm declares and the only door it has to agents and the transcript.

``Protocol`` (the declaration: roles, items, parameters, outcome statistics, display hints, the state machine) and
``Session`` (``ask``, ``send``, ``enter``, ``note``, ``verdict``); ``StateMachine`` (declared edges); the call
budget a protocol declares beside its machine (``CallBudget``); the prompt files a session renders.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from voirdire.base import lazy_face

if TYPE_CHECKING:
    from voirdire.session.ask import Ask as Ask
    from voirdire.session.budget import (
        Assumed as Assumed,
        Budget as Budget,
        CallBudget as CallBudget,
        Figure as Figure,
        RoleCalls as RoleCalls,
        merged as merged,
    )
    from voirdire.session.machine import StateMachine as StateMachine
    from voirdire.session.prompts import PromptLibrary as PromptLibrary
    from voirdire.session.protocol import (
        LONG_REPLY_CHARS as LONG_REPLY_CHARS,
        ParseError as ParseError,
        Protocol as Protocol,
        Reply as Reply,
        Session as Session,
        Statistics as Statistics,
        Writer as Writer,
    )

# Every name re-exported above (`X as X`) is exported, imported at its first use (voirdire.base.faces).
__getattr__, __dir__, __all__ = lazy_face(__name__)
