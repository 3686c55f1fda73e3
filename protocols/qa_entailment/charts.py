"""QA grading's chart (Table 1): accuracy and F1 of the grader's judgments against the human ones, per system."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from voirdire.kit import Report
from voirdire.kit.charts import BarChart, Chart, ChartFold, Series

from .report import QAReport


def charts(values: Sequence[Any], report: Report) -> list[Chart]:
    if not isinstance(report, QAReport):
        return []
    scored = {k: s for k, s in report.systems.items() if s.scores is not None}
    if not scored:
        return []
    names = tuple(scored)
    labels = tuple(scored[k].name for k in names)
    return [
        BarChart(
            "qa-grading-per-system",
            f"QA grading ({report.evaluator}): accuracy and F1 against human judgments, per system",
            "system",
            "%",
            labels,
            (
                Series("accuracy", tuple(100 * scored[k].scores.accuracy for k in names)),  # type: ignore[union-attr]
                Series("F1", tuple(100 * scored[k].scores.f1 for k in names)),  # type: ignore[union-attr]
            ),
            ylim=(0, 100),
        )
    ]


qa_charts = ChartFold(charts=charts)
