"""No-Data's charts (§7.1, Tables 2-3): the share of datapoints whose EV protocol survives k rounds against
Lemma 1's (1/4)^k, and the run's accuracy against Theorem 1's bound as the number of rounds grows."""

from __future__ import annotations

from collections.abc import Sequence
from statistics import mean

from voirdire.kit import Report
from voirdire.kit.charts import Chart, ChartFold, Line, LineChart
from voirdire.kit.data import SessionRecord, Step

from .algorithm import ROUND_STEP
from .report import NoDataReport
from .theory import lemma1_undetected_probability, theorem1_accuracy_bound


def rounds_passed(s: SessionRecord) -> int | None:
    """How many EV rounds the session passed before its first failure; None when it ran none."""
    steps = [e for e in s.events if isinstance(e, Step) and e.name == ROUND_STEP]
    if not steps:
        return None
    passed = 0
    for step in sorted(steps, key=lambda e: int(e.data.get("round", 0))):
        if not step.data.get("passed"):
            break
        passed += 1
    return passed


def charts(values: Sequence[int | None], report: Report) -> list[Chart]:
    if not isinstance(report, NoDataReport):
        return []
    out: list[Chart] = []
    r = report.rounds
    ran = [v for v in values if v is not None]
    ks = tuple(float(k) for k in range(r + 1))
    if ran:
        survived = tuple(100 * sum(v >= k for v in ran) / len(ran) for k in range(r + 1))
        out.append(
            LineChart(
                "no-data-success-per-round",
                f"No-Data: EV success after k rounds ({_sessions(len(ran))}, r = {r}) and Lemma 1",
                "rounds k",
                "sessions passing the first k rounds (%)",
                (
                    Line("observed", ks, survived),
                    Line(
                        "Lemma 1: a lie survives (1/4)^k",
                        ks,
                        tuple(100 * lemma1_undetected_probability(k) for k in range(r + 1)),
                        "dashed",
                    ),
                ),
                ylim=(0, 102),
                integer_x=True,
            )
        )
    alphas = [run.theory.alpha for run in report.runs if run.theory.alpha is not None]
    if alphas and report.runs:
        alpha = mean(alphas)
        horizon = max(r, 6)
        rs = tuple(float(k) for k in range(1, horizon + 1))
        bound = tuple(100 * theorem1_accuracy_bound(alpha, report.phi, k) for k in range(1, horizon + 1))
        observed = mean(run.accuracy for run in report.runs)
        at_r = theorem1_accuracy_bound(alpha, report.phi, r)
        # Theorem 1 (§7, Eq. 3) bounds the expected accuracy from above, for an evaluator that lies exactly when it
        # mislabels: an observed accuracy below the bound is within it, one above it breaks that assumption
        if observed <= at_r:
            caption = (
                f"Theorem 1 is an upper bound: E[correct] ≤ {100 * at_r:.1f}% at r = {r} for an evaluator that lies "
                f"iff it mislabels; the observed {100 * observed:.1f}% does not exceed it, as the theorem allows"
            )
        else:
            caption = (
                f"Theorem 1 is an upper bound: E[correct] ≤ {100 * at_r:.1f}% at r = {r} for an evaluator that lies "
                f"iff it mislabels; the observed {100 * observed:.1f}% is above it: this evaluator does not lie "
                "exactly when it mislabels"
            )
        out.append(
            LineChart(
                "no-data-theorem1",
                f"No-Data: accuracy against Theorem 1 (α = {alpha:.3f}, φ = {report.phi:g})",
                "rounds r",
                "accuracy (%)",
                (
                    Line("Theorem 1 upper bound 1 − (1 − α)(1 − φ + φ/4^r)", rs, bound, "dashed"),
                    Line(f"evaluator alone (α = {100 * alpha:.1f}%)", rs, tuple(100 * alpha for _ in rs), "dotted"),
                    Line(f"observed at r = {r}", (float(r),), (100 * observed,), "points"),
                ),
                ylim=(0, 102),
                integer_x=True,
                caption=caption,
            )
        )
    return out


no_data_charts = ChartFold(charts=charts, session=rounds_passed)


def _sessions(n: int) -> str:
    return f"{n} session{'s' if n != 1 else ''}"
