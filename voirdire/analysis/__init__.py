"""Reading finished runs: charts drawn with matplotlib, runs compared item by item, paper tables reproduced.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from voirdire.base import lazy_face

if TYPE_CHECKING:
    from voirdire.analysis.compare import (
        CompareError,
        Comparison,
        RunOverviews,
        compare,
        compare_runs,
        comparison_charts,
    )
    from voirdire.analysis.drawing import PlotsUnavailable, render, require, save, transcript_charts
    from voirdire.analysis.reproduce import check, get, listing, reproductions, run, text, write

# What runs: each name's module is imported at the name's first use (voirdire.base.faces).
__getattr__ = lazy_face(
    __name__,
    {
        "voirdire.analysis.compare": (
            "CompareError", "Comparison", "RunOverviews", "compare", "compare_runs", "comparison_charts",
        ),
        "voirdire.analysis.drawing": ("PlotsUnavailable", "render", "require", "save", "transcript_charts"),
        "voirdire.analysis.reproduce": ("check", "get", "listing", "reproductions", "run", "text", "write"),
    },
)

__all__ = [
    "CompareError",
    "Comparison",
    "PlotsUnavailable",
    "RunOverviews",
    "check",
    "compare",
    "compare_runs",
    "comparison_charts",
    "get",
    "listing",
    "render",
    "reproductions",
    "require",
    "run",
    "save",
    "text",
    "transcript_charts",
    "write",
]
