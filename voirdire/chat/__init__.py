"""A transcript read as a conversation: the one chat model (``turns``), its terminal rendering (``show``), the
live printer of a running session, and the progress spinner of long steps.
"""

from __future__ import annotations

from voirdire.chat.live import LiveChat, Mode, live_mode
from voirdire.chat.progress import stage
from voirdire.chat.terminal import render, summary_line
from voirdire.chat.turns import Bubble, Chat, Turn, chat_of

__all__ = [
    "Bubble",
    "Chat",
    "LiveChat",
    "Mode",
    "Turn",
    "chat_of",
    "live_mode",
    "render",
    "stage",
    "summary_line",
]
