"""Reading finished runs: charts drawn with matplotlib, runs compared item by item, paper tables reproduced.
"""

from __future__ import annotations

from voirdire.analysis.compare import CompareError, Comparison, RunOverviews, compare, compare_runs, comparison_charts
from voirdire.analysis.drawing import PlotsUnavailable, render, require, save, transcript_charts
from voirdire.analysis.reproduce import check, get, listing, reproductions, run, text, write

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
