"""The oracle–checker's charts: the linearity checker's acceptance against ε with Theorems 3.1–3.2's curve and
the rates a run observed (§3), and the paraphrase checker's decisions per oracle answer (Tables 3 and 5)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from voirdire.kit import Report
from voirdire.kit.charts import BarChart, Chart, ChartFold, Line, LineChart, Series
from voirdire.kit.data import SessionRecord

from .paraphrase_report import ParaphraseReport
from .theorems import failure_bound

EPSILONS = tuple(i / 100 for i in range(1, 101))


class Tested(NamedTuple):
    tests: int
    passed: int
    accepted: bool


def tested(s: SessionRecord) -> Tested | None:
    """A session whose linearity tests ran: how many, how many passed, accepted or not."""
    v = s.verdict
    if v is None or not isinstance(v.statistics.get("tests"), int) or "a_test" not in v.statistics:
        return None
    return Tested(v.statistics["tests"], int(v.statistics["a_test"]), bool(v.accepted))


def acceptance_curve(n: int) -> tuple[float, ...]:
    """Theorems 3.1–3.2: the most an ε-far f can be accepted by n independent tests, (1 − p(ε))^n."""
    return tuple(100 * (1 - failure_bound(e)) ** n for e in EPSILONS)


def acceptance_chart(name: str, title: str, n: int, observed: Sequence[Line] = ()) -> LineChart:
    return LineChart(
        name,
        title,
        "ε: distance of the extractor to the nearest homomorphism",
        "acceptance (%)",
        (
            Line(f"Theorem 3.1–3.2: at most (1 − p(ε))^{n}", EPSILONS, acceptance_curve(n), "dashed"),
            Line("one test: at most 1 − p(ε)", EPSILONS, acceptance_curve(1), "dotted"),
            *observed,
        ),
        ylim=(0, 102),
    )


def charts(values: Sequence[Tested | None], report: Report) -> list[Chart]:
    if isinstance(report, ParaphraseReport):
        return _paraphrase(report)
    runs = [v for v in values if v is not None]
    if not runs:
        return []
    n = max(v.tests for v in runs)
    accepted = sum(v.accepted for v in runs)
    tests = sum(v.tests for v in runs)
    passed = sum(v.passed for v in runs)
    observed = (
        Line(f"observed: {accepted}/{len(runs)} accepted", (0.0, 1.0), (100 * accepted / len(runs),) * 2),
        Line(f"observed: {passed}/{tests} tests passed", (0.0, 1.0), (100 * passed / tests,) * 2, "faint"),
    )
    return [
        acceptance_chart(
            "oracle-acceptance-vs-epsilon",
            f"Oracle–checker: acceptance vs ε (n = {n} tests, {len(runs)} {_sentences(len(runs))} tested)",
            n,
            observed,
        )
    ]


def _fraction(text: str) -> tuple[int, int]:
    a, _, b = text.partition("/")
    try:
        return int(a), int(b.split()[0])
    except (ValueError, IndexError):
        return 0, 0


def _paraphrase(report: ParaphraseReport) -> list[Chart]:
    groups = {f"Yes-prover: {k}": v for k, v in report.yes_accepted.items()}
    groups |= {f"No-checker: {k}": v for k, v in report.no_categories.items()}
    cells = {k: _fraction(v) for k, v in groups.items()}
    cells = {k: v for k, v in cells.items() if v[1]}
    if not cells:
        return []
    names = tuple(cells)
    return [
        BarChart(
            "paraphrase-acceptance",
            "Paraphrase checker: accepted per oracle answer (Tables 3 and 5)",
            "group",
            "accepted (%)",
            names,
            (Series("accepted", tuple(100 * cells[k][0] / cells[k][1] for k in names)),),
            ylim=(0, 100),
        )
    ]


oracle_charts: ChartFold = ChartFold(charts=charts, session=tested)


def _sentences(n: int) -> str:
    return "sentence" if n == 1 else "sentences"
