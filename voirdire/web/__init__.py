"""The web viewer (``voirdire view``) and the static export (``voirdire export-html``).

``index`` keeps byte offsets per session so a page reads only what it shows; ``catalog`` finds the transcripts of a
folder; ``query`` filters, searches and pages sessions; ``render`` holds the escaping Jinja environment both the
server (``app``, ``server``) and the export (``export``) use. The chat itself comes from ``voirdire.chat``, the
same model ``voirdire show`` renders in the terminal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from voirdire.base import lazy_face

if TYPE_CHECKING:
    from voirdire.web.errors import ViewerError
    from voirdire.web.export import export_file
    from voirdire.web.notebook import html_of
    from voirdire.web.review_run import LabelRefused, ReviewRun, review_run, review_summary
    from voirdire.web.server import Viewer

# What runs: each name's module is imported at the name's first use (voirdire.base.faces).
__getattr__ = lazy_face(
    __name__,
    {
        "voirdire.web.errors": ("ViewerError",),
        "voirdire.web.export": ("export_file",),
        "voirdire.web.notebook": ("html_of",),
        "voirdire.web.review_run": ("LabelRefused", "ReviewRun", "review_run", "review_summary"),
        "voirdire.web.server": ("Viewer",),
    },
)

__all__ = [
    "LabelRefused",
    "ReviewRun",
    "Viewer",
    "ViewerError",
    "export_file",
    "html_of",
    "review_run",
    "review_summary",
]
