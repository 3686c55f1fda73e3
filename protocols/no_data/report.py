"""Scores of a No-Data run read back from its session verdicts (``voirdire nodata``).

Each verdict carries phase 1's ``Decision`` in its statistics, so a run — fresh, resumed, or a mix — is scored
by rebuilding ``NoDataRun`` per seed and applying phase 1's ``experiments.score`` and ``theory_report``:
the numbers are the direct path's by construction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field

from voirdire.metrics import accuracy
from voirdire.transcript import Verdict

from .algorithm import Decision, NoDataRun
from .experiments import METRICS, MeanSD, f1, mean_sd, score
from .protocol import NoDataItem, NoDataProtocol
from .theory import TheoryReport, theory_report


class SeedScore(BaseModel):
    """One run (one seed) of Algorithm 1 over the items that reached a verdict."""

    seed: int
    n: int = Field(description="datapoints with a verdict (scored)")
    missing: int = Field(0, description="datapoints without a verdict (errors); left out of every metric")
    accuracy: float
    f1: float
    success_rate: float
    flip_rate: float
    revealed_accuracy: float
    known_accuracy: float | None = Field(None, description="the decision tree's plain accuracy (Table 2 'known')")
    known_f1: float | None = None
    theory: TheoryReport


def decision_of(verdict: Verdict) -> Decision:
    return Decision.model_validate({k: verdict.statistics[k] for k in Decision.model_fields})


def score_run(
    protocol: NoDataProtocol, items: Sequence[NoDataItem], verdicts: Mapping[str, Verdict]
) -> list[SeedScore]:
    """Per seed (in item order): accuracy, F1, success and flip rates, revealed accuracy, the known scores when
    the evaluator is the decision tree, and Lemma 1 / Theorem 1 with α = accuracy of the revealed labels."""
    seeds = list(dict.fromkeys(it.seed for it in items))
    p = protocol.params
    out = []
    for seed in seeds:
        mine = [it for it in items if it.seed == seed and it.y is not None]
        done = [(it, verdicts[protocol.item_id(it)]) for it in mine if protocol.item_id(it) in verdicts]
        if not done:
            continue
        gold = [it.y for it, _ in done]
        run = NoDataRun(decisions=[decision_of(v) for _, v in done])
        scores = score(run, gold)  # type: ignore[arg-type]
        known = protocol.known_labels([it.x for it, _ in done])
        out.append(
            SeedScore(
                seed=seed,
                n=len(done),
                missing=len(mine) - len(done),
                **scores,
                known_accuracy=None if known is None else accuracy(gold, known),
                known_f1=None if known is None else f1(gold, known),  # type: ignore[arg-type]
                theory=theory_report(p.rounds, p.phi, alpha=scores["revealed_accuracy"]),
            )
        )
    return out


def aggregate_scores(scores: Sequence[SeedScore]) -> dict[str, MeanSD]:
    """Mean ± sample sd over seeds of every metric (and of the Theorem 1 value)."""
    out = {m: mean_sd([getattr(s, m) for s in scores]) for m in METRICS}
    bounds = [s.theory.theorem1_bound for s in scores if s.theory.theorem1_bound is not None]
    if bounds:
        out["theorem1_bound"] = mean_sd(bounds)
    return out


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{100 * v:.1f}"


def format_scores(scores: Sequence[SeedScore], agg: Mapping[str, MeanSD] | None = None) -> str:
    """A table: one row per seed with the Lemma 1 and Theorem 1 values beside it, then mean ± sd."""
    head = (
        f"{'seed':>6}  {'n':>4}  {'accuracy':>8}  {'F1':>6}  {'success':>7}  {'flips':>6}  "
        f"{'known acc/F1':>12}  {'Thm 1 (α)':>16}  {'Lemma 1':>7}"
    )
    lines = [head]
    for s in scores:
        known = "—" if s.known_accuracy is None else f"{_pct(s.known_accuracy)}/{_pct(s.known_f1)}"
        thm = f"{_pct(s.theory.theorem1_bound)} ({_pct(s.theory.alpha)})"
        lines.append(
            f"{s.seed:>6}  {s.n:>4}  {_pct(s.accuracy):>8}  {_pct(s.f1):>6}  {_pct(s.success_rate):>7}  "
            f"{_pct(s.flip_rate):>6}  {known:>12}  {thm:>16}  {100 * s.theory.lemma1_undetected:>6.2f}%"
        )
    if agg is not None and len(scores) > 1:
        shown = (("accuracy", "accuracy"), ("F1", "f1"), ("success", "success_rate"), ("flips", "flip_rate"))
        row = "  ".join(f"{name} {agg[key].fmt()}" for name, key in shown)
        lines.append(f"mean ± sd over {len(scores)} seeds: {row}")
    if scores:
        t = scores[0].theory
        lines.append(
            f"Lemma 1: a lie survives r = {t.rounds} rounds w.p. (1/4)^r = {100 * t.lemma1_undetected:.2f}%. "
            f"Theorem 1: 1 − (1 − α)(1 − φ + φ(1/4)^r) with φ = {t.phi} and α = accuracy of the revealed labels, "
            f"a {t.theorem1_direction} (eq. (3) prints ≤; see docs/no_data.md). Numbers in %."
        )
    return "\n".join(lines)
