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
    from voirdire.analysis.examples import (
        ExampleOutcome,
        examples,
        examples_table,
        find,
        replay,
        run_examples,
        unprinted,
        write_examples,
    )
    from voirdire.analysis.reproduce import check, get, listing, reproductions, run, text, write

# What runs: each name's module is imported at the name's first use (voirdire.base.faces).
__getattr__ = lazy_face(
    __name__,
    {
        "voirdire.analysis.compare": (
            "CompareError", "Comparison", "RunOverviews", "compare", "compare_runs", "comparison_charts",
        ),
        "voirdire.analysis.drawing": ("PlotsUnavailable", "render", "require", "save", "transcript_charts"),
        "voirdire.analysis.examples": (
            "ExampleOutcome", "examples", "examples_table", "find", "replay", "run_examples", "unprinted",
            "write_examples",
        ),
        "voirdire.analysis.reproduce": ("check", "get", "listing", "reproductions", "run", "text", "write"),
    },
)

__all__ = [
    "CompareError",
    "Comparison",
    "ExampleOutcome",
    "PlotsUnavailable",
    "RunOverviews",
    "check",
    "compare",
    "compare_runs",
    "comparison_charts",
    "examples",
    "examples_table",
    "find",
    "get",
    "listing",
    "render",
    "replay",
    "reproductions",
    "require",
    "run",
    "run_examples",
    "save",
    "text",
    "transcript_charts",
    "unprinted",
    "write",
    "write_examples",
]
