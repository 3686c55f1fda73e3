"""The ``voirdire`` command, generated from the protocol registry.

``voirdire run NAME`` exists for every registered protocol, with options generated from its ``Params``
(``registry.flags``) beside the shared model and run options (``voirdire.cli.options``); a protocol that names a
friendly command (``examine``, ``nodata``, ``qa-eval``) gets it too, with the same options. ``list``, ``show`` and
``report`` (``voirdire.cli.read``), ``view`` and ``export-html`` (``voirdire.cli.web``) work on any protocol's
transcripts through the registry and the self-describing run header. The parser and the exit statuses are
``voirdire.cli.main``.
"""

from __future__ import annotations

from voirdire.cli.main import build_parser, main

__all__ = [
    "build_parser",
    "main",
]
