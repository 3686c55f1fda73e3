"""A paper's tables and figures for ``voirdire reproduce``: ``Reproduction`` of ``Cell`` with their
``Outcome`` and ``Options``; ``run_voirdire``, ``model_args``, ``paper_models_note``, ``default_out``; ``require``
and ``save`` for what a reproduction reads and writes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from voirdire.base import lazy_face

if TYPE_CHECKING:
    from voirdire.analysis import require as require, save as save
    from voirdire.reports import (
        Cell as Cell,
        Options as Options,
        Outcome as Outcome,
        Reproduction as Reproduction,
        model_args as model_args,
        paper_models_note as paper_models_note,
        run_voirdire as run_voirdire,
    )
    from voirdire.runner import default_out as default_out

__getattr__, __dir__, __all__ = lazy_face(__name__)
