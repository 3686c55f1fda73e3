"""LMvLM's chart (§4.1): precision, recall and F1 of rejecting incorrect claims and of accepting correct ones."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from voirdire.kit import Report
from voirdire.kit.charts import BarChart, Chart, ChartFold, Series
from voirdire.kit.reports import LeftOut

from .scoring import Report as LMvLMReport


def charts(values: Sequence[Any], report: Report) -> list[Chart]:
    if not isinstance(report, LMvLMReport):
        return []
    pairs = [(name, prf) for name, prf in (("reject incorrect", report.reject_incorrect),
                                           ("accept correct", report.accept_correct)) if prf is not None]  # fmt: skip
    if not pairs:
        return []
    return [
        BarChart(
            "lmvlm-precision-recall",
            f"LMvLM: precision, recall and F1 against gold ({report.scored} scored {_claims(report.scored)})",
            "decision",
            "%",
            tuple(name for name, _ in pairs),
            tuple(Series(m, tuple(prf.pct()[m] for _, prf in pairs)) for m in ("P", "R", "F1")),
            ylim=(0, 100),
        )
    ]


def left_out(values: Sequence[Any], report: Report) -> list[LeftOut]:
    if isinstance(report, LMvLMReport) and report.reject_incorrect is None and report.accept_correct is None:
        return [LeftOut("lmvlm-precision-recall", "no claim has a gold label to score against (§4.1)")]
    return []


lmvlm_charts = ChartFold(charts=charts, left_out=left_out)


def _claims(n: int) -> str:
    return "claim" if n == 1 else "claims"
