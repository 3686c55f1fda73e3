"""A transcript read as a conversation: the one chat model (``turns``), its terminal rendering (``show``), the
live printer of a running session, and the progress spinner of long steps.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from voirdire.base import lazy_face

if TYPE_CHECKING:
    from voirdire.chat.live import LiveChat as LiveChat, Mode as Mode, live_mode as live_mode
    from voirdire.chat.progress import stage as stage
    from voirdire.chat.terminal import render as render, summary_line as summary_line
    from voirdire.chat.turns import (
        Bubble as Bubble,
        Chat as Chat,
        Turn as Turn,
        chat_of as chat_of,
        gold_values as gold_values,
    )

# Every name re-exported above (`X as X`) is exported, imported at its first use (voirdire.base.faces).
__getattr__, __dir__, __all__ = lazy_face(__name__)
