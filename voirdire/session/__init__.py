"""What a paper's algorithm declares and the only door it has to agents and the transcript.

``Protocol`` (the declaration: roles, items, parameters, outcome statistics, display hints, the state machine) and
``Session`` (``ask``, ``send``, ``enter``, ``note``, ``verdict``); ``StateMachine`` (declared edges); the call
budget a protocol declares beside its machine (``CallBudget``); the prompt files a session renders.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from voirdire.base import lazy_face

if TYPE_CHECKING:
    from voirdire.session.budget import Assumed, Budget, CallBudget, Figure, RoleCalls, merged
    from voirdire.session.machine import StateMachine
    from voirdire.session.prompts import PromptLibrary
    from voirdire.session.protocol import LONG_REPLY_CHARS, ParseError, Protocol, Reply, Session, Statistics, Writer

# What runs: each name's module is imported at the name's first use (voirdire.base.faces).
__getattr__ = lazy_face(
    __name__,
    {
        "voirdire.session.budget": ("Assumed", "Budget", "CallBudget", "Figure", "RoleCalls", "merged"),
        "voirdire.session.machine": ("StateMachine",),
        "voirdire.session.prompts": ("PromptLibrary",),
        "voirdire.session.protocol": (
            "LONG_REPLY_CHARS", "ParseError", "Protocol", "Reply", "Session", "Statistics", "Writer",
        ),
    },
)

__all__ = [
    "LONG_REPLY_CHARS",
    "Assumed",
    "Budget",
    "CallBudget",
    "Figure",
    "ParseError",
    "PromptLibrary",
    "Protocol",
    "Reply",
    "RoleCalls",
    "Session",
    "StateMachine",
    "Statistics",
    "Writer",
    "merged",
]
