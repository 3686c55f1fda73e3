"""The web viewer (``voirdire view``) and the static export (``voirdire export-html``).

``index`` keeps byte offsets per session so a page reads only what it shows; ``catalog`` finds the transcripts of a
folder; ``query`` filters, searches and pages sessions; ``render`` holds the escaping Jinja environment both the
server (``app``, ``server``) and the export (``export``) use. The chat itself comes from ``voirdire.chat``, the
same model ``voirdire show`` renders in the terminal.
"""

from __future__ import annotations

from voirdire.web.errors import ViewerError

__all__ = ["ViewerError"]
