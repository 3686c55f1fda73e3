"""What a paper's algorithm declares and the only door it has to agents and the transcript.

``Protocol`` (the declaration: roles, items, parameters, outcome statistics, display hints, the state machine) and
``Session`` (``ask``, ``send``, ``enter``, ``note``, ``verdict``); ``StateMachine`` (declared edges); the call
budget a protocol declares beside its machine (``CallBudget``); the prompt files a session renders.
"""

from __future__ import annotations

from voirdire.session.budget import Assumed, Budget, CallBudget, Figure, RoleCalls, merged
from voirdire.session.machine import StateMachine
from voirdire.session.prompts import PromptLibrary
from voirdire.session.protocol import LONG_REPLY_CHARS, ParseError, Protocol, Reply, Session, Statistics, Writer

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
