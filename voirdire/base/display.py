"""Rich display in Jupyter: ``_repr_html_`` for the objects a notebook shows (a session, a run, a report, a
comparison), drawn by a renderer that a higher layer registers.

The objects live in low layers (the transcript, the runner, the reports), while their HTML comes from the viewer's
templates in the web layer above them; so an object only asks for the renderer, and the ``voirdire`` package
registers it (``set_html_renderer``) when it is imported, without importing the viewer until a cell displays one.
"""

from __future__ import annotations

from collections.abc import Callable

_renderer: list[Callable[[object], str | None]] = []


def set_html_renderer(renderer: Callable[[object], str | None]) -> None:
    """Make ``renderer`` draw every ``HtmlDisplay`` object (the last one set wins)."""
    _renderer[:] = [renderer]


class HtmlDisplay:
    """A base class giving ``_repr_html_``: Jupyter shows the object as the registered renderer draws it (no
    script: text escaped, the viewer's own markup); without a renderer it shows the object's text form."""

    __slots__ = ()

    def _repr_html_(self) -> str | None:
        return _renderer[0](self) if _renderer else None
