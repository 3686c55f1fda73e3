"""A transcript read as a conversation: the one chat model (``turns``), its terminal rendering (``show``), the
live printer of a running session, and the progress spinner of long steps.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from voirdire.base import lazy_face

if TYPE_CHECKING:
    from voirdire.chat.live import LiveChat, Mode, live_mode
    from voirdire.chat.progress import stage
    from voirdire.chat.terminal import render, summary_line
    from voirdire.chat.turns import Bubble, Chat, Turn, chat_of

# What runs: each name's module is imported at the name's first use (voirdire.base.faces).
__getattr__ = lazy_face(
    __name__,
    {
        "voirdire.chat.live": ("LiveChat", "Mode", "live_mode"),
        "voirdire.chat.progress": ("stage",),
        "voirdire.chat.terminal": ("render", "summary_line"),
        "voirdire.chat.turns": ("Bubble", "Chat", "Turn", "chat_of"),
    },
)

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
