"""The viewer's user-facing error: a path, port or transcript it cannot use, named in one line."""

from __future__ import annotations

from voirdire.base import VoirdireError


class ViewerError(VoirdireError, ValueError):
    """A path, port or transcript the viewer cannot use; the message names it."""
