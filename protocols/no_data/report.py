"""Scores of a No-Data run, read from its session verdicts alone (``voirdire report``, ``voirdire nodata``).

Each verdict carries Algorithm 1's ``Decision`` for its datapoint, the reference label, its seed and, with the
decision tree, the tree's own label of ``x`` (Table 2's "known" column). So a run -- fresh, resumed, or a mix
-- is scored per seed from its verdicts: accuracy, F1, success and flip rates, the accuracy of the revealed
labels, the known scores, and Lemma 1 / Theorem 1 (§7.1) with α = the accuracy of the revealed labels.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

from pydantic import BaseModel, Field

from voirdire.kit import Report, ReportFold, Verdict
from voirdire.kit.data import SessionRecord
from voirdire.kit.reports import (
    DEFAULT_SEED,
    Context,
    Interval,
    accuracy,
    bootstrap_f1,
    precision_recall_f1,
    proportion,
)

from .algorithm import Decision, NoDataOutcome, NoDataRun
from .data import FILES
from .protocol import NoDataItem, NoDataProtocol
from .rubric import Label
from .theory import TheoryReport, theory_report

METRICS = ("accuracy", "f1", "success_rate", "flip_rate", "revealed_accuracy")


class MeanSD(BaseModel):
    mean: float
    sd: float
    n: int

    def fmt(self, scale: float = 100.0, digits: int = 1) -> str:
        return f"{self.mean * scale:.{digits}f} ± {self.sd * scale:.{digits}f}"


def mean_sd(values: Sequence[float]) -> MeanSD:
    """Mean and sample standard deviation (ddof = 1; 0 for a single value)."""
    n = len(values)
    if n == 0:
        raise ValueError("no values")
    m = sum(values) / n
    sd = math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    return MeanSD(mean=m, sd=sd, n=n)


def f1(gold: Sequence[Label], pred: Sequence[Label]) -> float:
    """Binary F1 of label 1, as the paper's tables (scikit-learn's ``f1_score`` default)."""
    return precision_recall_f1([g == 1 for g in gold], [p == 1 for p in pred]).f1


def score(run: NoDataRun, gold: Sequence[Label]) -> dict[str, float]:
    return {
        "accuracy": accuracy(gold, run.predictions),
        "f1": f1(gold, run.predictions),
        "success_rate": run.success_rate,
        "flip_rate": run.flip_rate,
        "revealed_accuracy": accuracy(gold, run.revealed),
    }


class SeedScore(BaseModel):
    """One run (one seed) of Algorithm 1 over the datapoints that reached a verdict."""

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
    return Decision.model_validate(NoDataOutcome.model_validate(verdict.statistics).model_dump(include=_DECISION))


_DECISION = frozenset(Decision.model_fields)


class Outcome(NamedTuple):
    """What the scores need of one verdict: the reference label, Algorithm 1's decision and the tree's label."""

    reference: int
    label: Label
    revealed: Label
    success: bool
    flipped: bool
    known: Any  # the decision tree's own label of x (Table 2 "known"), None without one


def outcome_of(verdict: Verdict) -> Outcome:
    o = NoDataOutcome.model_validate(verdict.statistics)
    if o.reference is None:
        raise ValueError(f"session {verdict.session_id}: an unlabelled datapoint has no score")
    return Outcome(
        reference=o.reference,
        label=o.label,
        revealed=o.revealed,
        success=o.success,
        flipped=o.flipped,
        known=o.known_label,
    )


def _seed_score(seed: int, outcomes: Sequence[Outcome], *, rounds: int, phi: float, missing: int = 0) -> SeedScore:
    gold = [o.reference for o in outcomes]
    # An Outcome has the fields of a Decision that NoDataRun reads (label, revealed, success, flipped), so the rates
    # are computed by Algorithm 1's own code, without a Decision per datapoint.
    scores = score(NoDataRun.model_construct(decisions=list(outcomes)), gold)
    known = [o.known for o in outcomes]
    plain = None if any(k is None for k in known) else [int(k) for k in known]
    return SeedScore(
        seed=seed,
        n=len(outcomes),
        missing=missing,
        **scores,
        known_accuracy=None if plain is None else accuracy(gold, plain),
        known_f1=None if plain is None else f1(gold, plain),
        theory=theory_report(rounds, phi, alpha=scores["revealed_accuracy"]),
    )


def seed_score(seed: int, verdicts: Sequence[Verdict], *, rounds: int, phi: float, missing: int = 0) -> SeedScore:
    """The scores of one seed's verdicts (each with a reference label)."""
    return _seed_score(seed, [outcome_of(v) for v in verdicts], rounds=rounds, phi=phi, missing=missing)


def _seed_scores(datapoints: Iterable[tuple[int, Outcome | None]], *, rounds: int, phi: float) -> list[SeedScore]:
    by_seed: dict[int, list[Outcome | None]] = {}
    for seed, outcome in datapoints:
        by_seed.setdefault(seed, []).append(outcome)
    out = []
    for seed, found in by_seed.items():
        done = [o for o in found if o is not None]
        if done:
            out.append(_seed_score(seed, done, rounds=rounds, phi=phi, missing=len(found) - len(done)))
    return out


def seed_scores(datapoints: Iterable[tuple[int, Verdict | None]], *, rounds: int, phi: float) -> list[SeedScore]:
    """Per seed, in order of first appearance: the scores of the ``(seed, verdict)`` pairs of datapoints with a
    reference label; a datapoint without a verdict (an error) counts as missing."""
    pairs = [(seed, outcome_of(v) if v is not None else None) for seed, v in datapoints]
    return _seed_scores(pairs, rounds=rounds, phi=phi)


def score_run(
    protocol: NoDataProtocol, items: Sequence[NoDataItem], verdicts: Mapping[str, Verdict]
) -> list[SeedScore]:
    """Per seed (in item order) for ``NoDataProtocol`` items and their verdicts by session id."""
    p = protocol.params
    pairs = ((it.seed, verdicts.get(protocol.item_id(it))) for it in items if it.y is not None)
    return seed_scores(pairs, rounds=p.rounds, phi=p.phi)


def aggregate_scores(scores: Sequence[SeedScore]) -> dict[str, MeanSD]:
    """Mean ± sample sd over seeds of every metric (and of the Theorem 1 value)."""
    out = {m: mean_sd([getattr(s, m) for s in scores]) for m in METRICS}
    bounds = [s.theory.theorem1_bound for s in scores if s.theory.theorem1_bound is not None]
    if bounds:
        out["theorem1_bound"] = mean_sd(bounds)
    return out


class NoDataReport(Report):
    """A No-Data run's report: the run's setting, one row of scores per seed, and mean ± sd over seeds."""

    dataset: str | None = Field(None, description="the data set's name: ip-test, oop-test or the file's stem")
    rubric: str | None = Field(None, description="the verifier's rubric")
    evaluator: str | None = None
    generator: str | None = None
    rounds: int = 3
    phi: float = 0.6
    datapoints: int = Field(0, description="distinct datapoints (rows) among the sessions")
    runs: list[SeedScore] = Field(default_factory=list)
    aggregate: dict[str, MeanSD] = Field(default_factory=dict)
    intervals: dict[str, Interval] = Field(
        default_factory=dict, description="'seed S · accuracy' ...: each seed's scores with their intervals"
    )

    PERCENT_INTERVALS: ClassVar[frozenset[str]] = Report.PERCENT_INTERVALS | {"revealed accuracy", "flip rate"}

    def heading(self) -> str:
        return (
            f"{self.dataset} ({self.datapoints} datapoints, verifier rubric {self.rubric}) · evaluator "
            f"{self.evaluator}, generator {self.generator} · r = {self.rounds}, φ = {self.phi} "
            "(P(flip a failed label), Alg. 1)"
        )

    def scores_text(self) -> str:
        """What ``voirdire nodata`` prints: the heading and the table of scores."""
        return f"{self.heading()}\n{format_scores(self.runs, self.aggregate)}"

    def text(self) -> str:
        return "\n".join([self.scores_text(), *self.summary_lines(), *self.interval_lines(), *self.usage_lines()])


def dataset_name(data: str) -> str:
    return f"{data}-test" if data in FILES else Path(data).stem


class Datapoint(NamedTuple):
    """What the report keeps of one session: its row index, its seed, whether it has a reference label, and the
    outcome of its verdict (None without one)."""

    index: Any
    seed: int
    labelled: bool
    outcome: Outcome | None


def datapoint(s: SessionRecord) -> Datapoint:
    """The report's fold over one session."""
    labelled = s.item.get("y") is not None
    v = s.verdict
    return Datapoint(
        index=s.item.get("index"),
        seed=int(s.item.get("seed", 0)),
        labelled=labelled,
        outcome=outcome_of(v) if labelled and v is not None else None,
    )


def _finish(values: Sequence[Datapoint], ctx: Context) -> NoDataReport:
    header = ctx.header
    params: dict[str, Any] = header.parameters if header is not None else {}
    rounds, phi = int(params.get("rounds", 3)), float(params.get("phi", 0.6))
    runs = _seed_scores([(d.seed, d.outcome) for d in values if d.labelled], rounds=rounds, phi=phi)
    data = params.get("data")
    rubric = params.get("rubric") or (data if data in FILES else None)
    intervals = _intervals(values, ctx.ci) if ctx.ci and runs else {}
    return NoDataReport(
        ci=ctx.ci if intervals else None,
        ci_seed=DEFAULT_SEED if intervals else None,
        intervals=intervals,
        protocol=header.protocol if header is not None else "no_data",
        transcript=ctx.path,
        **ctx.counts,
        dataset=None if data is None else dataset_name(str(data)),
        rubric=rubric,
        evaluator=params.get("evaluator"),
        generator=params.get("generator"),
        rounds=rounds,
        phi=phi,
        datapoints=len({d.index for d in values}),
        runs=runs,
        aggregate=aggregate_scores(runs) if runs else {},
    )



def _intervals(values: Sequence[Datapoint], level: float) -> dict[str, Interval]:
    """Each seed's accuracy, F1, success and flip rates, revealed accuracy (and the tree's known accuracy and F1):
    a seed is one run of Algorithm 1, so its datapoints are the items resampled (Wilson for the proportions, a BCa
    bootstrap for F1); a datapoint examined in several sessions of one seed is resampled as one."""
    by_seed: dict[int, dict[Any, list[Outcome]]] = {}
    for d in values:
        if d.labelled and d.outcome is not None:
            key = d.index if d.index is not None else object()  # a datapoint without a row index: its own item
            by_seed.setdefault(d.seed, {}).setdefault(key, []).append(d.outcome)
    out: dict[str, Interval] = {}
    for seed, by_item in by_seed.items():
        groups = list(by_item.values())

        def share(name: str, hit: Any, groups: list[list[Outcome]] = groups) -> Interval:
            return proportion(name, [[bool(hit(o)) for o in g] for g in groups], level=level, seed=DEFAULT_SEED)

        def f1_of(label: Any, groups: list[list[Outcome]] = groups) -> Interval:
            pairs = [[(o.reference == 1, label(o) == 1) for o in g] for g in groups]
            return bootstrap_f1("F1", pairs, level=level, seed=DEFAULT_SEED)

        out[f"seed {seed} · accuracy"] = share("accuracy", lambda o: o.label == o.reference)
        out[f"seed {seed} · F1"] = f1_of(lambda o: o.label)
        out[f"seed {seed} · success rate"] = share("success rate", lambda o: o.success)
        out[f"seed {seed} · flip rate"] = share("flip rate", lambda o: o.flipped)
        out[f"seed {seed} · revealed accuracy"] = share("revealed accuracy", lambda o: o.revealed == o.reference)
        if all(o.known is not None for g in groups for o in g):
            out[f"seed {seed} · known accuracy"] = share("accuracy", lambda o: int(o.known) == o.reference)
            out[f"seed {seed} · known F1"] = f1_of(lambda o: int(o.known))
    return out


report: ReportFold[Datapoint, NoDataReport] = ReportFold(session=datapoint, finish=_finish)
"""The report of a No-Data transcript (``voirdire report``): ``report(transcript)``, or folded."""


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
