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
    from voirdire.web.errors import ViewerError as ViewerError
    from voirdire.web.export import export_file as export_file
    from voirdire.web.notebook import html_of as html_of
    from voirdire.web.review_run import (
        LabelRefused as LabelRefused,
        ReviewRun as ReviewRun,
        review_run as review_run,
        review_summary as review_summary,
    )
    from voirdire.web.server import Viewer as Viewer

# Every name re-exported above (`X as X`) is exported, imported at its first use (voirdire.base.faces).
__getattr__, __dir__, __all__ = lazy_face(__name__)
