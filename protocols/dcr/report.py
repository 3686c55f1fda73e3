"""The report of a DCR transcript: what §4.3-4.5 measure, computed from the verdicts alone.

- scores: Ẑ of the original candidates (DCE-AMC, Tables 2-4) and of the final ones;
- Table 5: inconsistent candidates (Ẑ < 1), those corrected by RAI (Ẑ = 1 after improvement) and the consistency
  improvement rate, after the first round and after all rounds;
- Fig. 4: the share of candidates that are consistent after each round (a candidate stays as its last scored
  round left it), and the frequency distribution of the scores after each round (Fig. 4 right);
- the correlation of the original candidates' Ẑ with the human judgment, when the items carry one (Tables 2-4,
  computed as ``correlation.py`` explains for the items' benchmark).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from statistics import fmean
from typing import Any, ClassVar, NamedTuple

from pydantic import BaseModel, Field

from voirdire.kit import Guarantee, Report, ReportFold
from voirdire.kit.data import SessionRecord
from voirdire.kit.reports import (
    DEFAULT_SEED,
    Interval,
    auroc,
    bootstrap_items,
    category,
    counts,
    kendall_tau_b,
    pearson,
    proportion,
    spearman,
)

from .data import KIND
from .human_correlation import Correlation, Kind, correlate
from .outcome import DCROutcome, Score


class Improvement(BaseModel):
    """Table 5: candidates found inconsistent, corrected by RAI, and the rate."""

    inconsistent: int
    corrected: int
    rate: float | None


class DCRReport(Report):
    scored: int = 0
    unscored: int = 0
    mean_initial_score: float | None = None
    mean_final_score: float | None = None
    consistent_initial: int = 0
    first_round: Improvement | None = None
    all_rounds: Improvement | None = None
    consistent_after_round: list[float] = Field(default_factory=list)
    score_distribution: list[dict[str, int]] = Field(
        default_factory=list, description="per round, how many candidates score in each bin (Fig. 4 right)"
    )
    stopped: dict[str, int] = Field(default_factory=dict)
    sentence_coverage: dict[str, int] = Field(
        default_factory=dict,
        description="over the final candidates: sentences, those DCE evaluated, those AMC scored (each verdict's "
        "guarantee, Eq. 3's k)",
    )
    correlation: Correlation | None = None
    correlation_dataset: str | None = None
    rows: list[dict[str, Any]] = Field(default_factory=list)
    intervals: dict[str, Interval] = Field(
        default_factory=dict, description="mean scores, Table 5 and Fig. 4 shares, the correlation with intervals"
    )

    PERCENT_INTERVALS: ClassVar[frozenset[str]] = Report.PERCENT_INTERVALS | {"consistent", "improvement rate"}

    def text(self) -> str:
        lines = self.summary_lines()
        lines.append(f"scored {self.scored}, unscored {self.unscored}; stopped: {_pairs(self.stopped)}")
        if self.mean_initial_score is not None:
            lines.append(
                f"mean score (Eq. 3): original {self.mean_initial_score:.3f}, final {self.mean_final_score:.3f}; "
                f"consistent at first evaluation {self.consistent_initial}/{self.scored}"
            )
        for label, imp in (("after round 1", self.first_round), ("after all rounds", self.all_rounds)):
            if imp is not None and imp.inconsistent:
                rate = f"{100 * imp.rate:.2f}%" if imp.rate is not None else "-"
                lines.append(
                    f"Table 5 {label}: inconsistent {imp.inconsistent}, corrected {imp.corrected}, "
                    f"improvement rate {rate}"
                )
        if len(self.consistent_after_round) > 1:
            shares = ", ".join(f"r{r} {100 * s:.1f}%" for r, s in enumerate(self.consistent_after_round))
            lines.append(f"Fig. 4 consistent after each round: {shares}")
        for r, bins in enumerate(self.score_distribution):
            lines.append(f"  scores after round {r}: " + ", ".join(f"{k} {v}" for k, v in bins.items()))
        c = self.sentence_coverage
        if c.get("sentences"):
            lines.append(
                f"sentences the final scores rest on (Eq. 3): {c['scored']} of {c['sentences']} scored "
                f"({100 * c['scored'] / c['sentences']:.1f}%), {c['evaluated']} evaluated by DCE"
            )
        if self.correlation is not None:
            lines.append(f"correlation with human ({self.correlation_dataset}): {self.correlation.text()}")
        return "\n".join([*lines, *self.interval_lines(), *self.usage_lines()])


def _pairs(c: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(c.items())) or "-"


BINS = ((0.25, "[0,.25)"), (0.5, "[.25,.5)"), (0.75, "[.5,.75)"), (1.0, "[.75,1)"))


def histogram(scores: list[float]) -> dict[str, int]:
    """Scores in the bins of Fig. 4 (right), 1.0 (consistent) apart."""
    out = {label: 0 for _, label in BINS} | {"1": 0}
    for x in scores:
        out[next((label for upper, label in BINS if x < upper), "1")] += 1
    return out


def _improvement(pairs: list[tuple[float, float | None]]) -> Improvement:
    inconsistent = [after for before, after in pairs if before < 1]
    corrected = sum(after == 1 for after in inconsistent)
    return Improvement(
        inconsistent=len(inconsistent),
        corrected=corrected,
        rate=corrected / len(inconsistent) if inconsistent else None,
    )


class Judged(NamedTuple):
    """What the correlation with human judgments needs of one session."""

    dataset: Any
    human: Any
    doc_id: Any
    item_id: str | None
    verdict: bool
    metric: Any  # the verdict statistic correlated (the original candidate's score by default)


def judged(s: SessionRecord, score: Score = "initial_score") -> Judged:
    return Judged(
        dataset=s.item.get("dataset"),
        human=s.item.get("human"),
        doc_id=s.item.get("doc_id"),
        item_id=s.item_id,
        verdict=s.verdict is not None,
        metric=DCROutcome.model_validate(s.verdict.statistics).metric(score) if s.verdict is not None else None,
    )


def _dataset_kind(items: Sequence[Judged]) -> tuple[str | None, Kind | None]:
    names = {j.dataset for j in items}
    name = names.pop() if len(names) == 1 else None
    if name in KIND:
        return name, KIND[name]
    humans = [j.human for j in items if j.human is not None]
    if len(humans) < 2:
        return name, None
    if set(humans) <= {0.0, 1.0}:
        return name, "binary"
    docs = [j.doc_id for j in items]
    if all(docs) and len(set(docs)) < len(docs):
        return name, "summary"
    return name, "sample"


def _human_correlation(items: Sequence[Judged]) -> tuple[str | None, Correlation | None]:
    name, kind = _dataset_kind(items)
    rows = [
        (j.doc_id or j.item_id, float(j.metric), float(j.human))
        for j in items
        if j.verdict and j.metric is not None and j.human is not None
    ]
    if kind is None or len(rows) < 2:
        return name, None
    docs, metric, human = zip(*rows, strict=True)
    return name, correlate(kind, metric, human, docs)


def dataset_kind(sessions: list[SessionRecord]) -> tuple[str | None, Kind | None]:
    """The benchmark the items came from and how it is correlated (a file of items: binary when every human
    judgment is 0/1, summary level when documents repeat, else sample level)."""
    return _dataset_kind([judged(s) for s in sessions])


def human_correlation(
    sessions: list[SessionRecord], score: Score = "initial_score"
) -> tuple[str | None, Correlation | None]:
    """The correlation of a verdict statistic (the original candidates' Ẑ by default) with the human judgments."""
    return _human_correlation([judged(s, score) for s in sessions])


class Scored(NamedTuple):
    """What the report keeps of one session: its row; with a verdict, its scores (Ẑ at first, per round, final;
    ``None`` when unscored), why it stopped, and what the correlation needs."""

    row: dict[str, Any]
    verdict: bool
    initial: Any = None
    scores: Any = None
    final: Any = None
    stopped: Any = None
    judged: Judged | None = None
    coverage: tuple[int, int, int] | None = None  # the verdict's guarantee: sentences, evaluated, scored


def scored(s: SessionRecord) -> Scored:
    """The report's fold over one session."""
    v = s.verdict
    o = DCROutcome.model_validate(v.statistics) if v else None
    row = {
        "id": s.item_id,
        "decision": category(v.decision) if v else None,
        "scores": o.scores if o else None,
        "human": s.item.get("human"),
    }
    if v is None or o is None:
        return Scored(row=row, verdict=False)
    initial = o.initial_score
    return Scored(
        row=row,
        verdict=True,
        initial=initial,
        scores=o.scores if initial is not None else None,  # a scored candidate has both
        final=o.score if initial is not None else None,
        stopped=category(o.stopped),
        judged=judged(s),
        coverage=_coverage(v.guarantee, row),
    )


def _coverage(g: Guarantee | None, row: dict[str, Any]) -> tuple[int, int, int] | None:
    """The verdict's sentence coverage (``Round.coverage``), its share kept in the row; None before verdicts
    carried one."""
    if g is None or g.kind != "sentence_coverage":
        return None
    row["share_scored"] = g.values.get("share_scored")
    counts = (g.values.get("sentences"), g.values.get("evaluated"), g.values.get("scored"))
    return counts if all(isinstance(n, int) for n in counts) else None  # type: ignore[return-value]


def _correlation_intervals(
    judged: Sequence[Judged], correlation: Correlation, level: float
) -> dict[str, Interval]:
    """The correlation's statistics with BCa bootstrap intervals. Summary level resamples documents (the statistic is
    the mean of the per-document correlations), sample level and binary resample items."""
    boot: dict[str, Any] = {"level": level, "seed": DEFAULT_SEED}
    rows = [(j.doc_id or j.item_id, float(j.metric), float(j.human))
            for j in judged if j.verdict and j.metric is not None and j.human is not None]  # fmt: skip
    out: dict[str, Interval] = {}
    if correlation.kind == "summary":
        by_doc: dict[Any, list[tuple[float, float]]] = {}
        for doc, m, h in rows:
            by_doc.setdefault(doc, []).append((m, h))
        for name, stat in (("spearman", spearman), ("kendall", kendall_tau_b)):
            per_doc = [[stat([m for m, _ in pairs], [h for _, h in pairs])] for pairs in by_doc.values()
                       if len({h for _, h in pairs}) > 1 and len({m for m, _ in pairs}) > 1]  # fmt: skip
            out[f"correlation · {name} (mean over documents)"] = bootstrap_items(name, per_doc, fmean, **boot)
        return out
    by_item: dict[Any, list[tuple[float, float]]] = {}
    for doc, m, h in rows:
        by_item.setdefault(doc, []).append((m, h))
    groups = list(by_item.values())

    def on_pairs(stat: Callable[[Sequence[float], Sequence[float]], float]) -> Callable[[list[Any]], float]:
        return lambda pairs: stat([m for m, _ in pairs], [h for _, h in pairs])

    if correlation.kind == "binary":
        out["correlation · auroc"] = bootstrap_items(
            "AUROC", groups, lambda pairs: auroc([h == 1 for _, h in pairs], [m for m, _ in pairs]), **boot
        )
        return out
    for name, stat in (("pearson", pearson), ("spearman", spearman), ("kendall", kendall_tau_b)):
        out[f"correlation · {name}"] = bootstrap_items(name, groups, on_pairs(stat), **boot)
    return out


def _intervals(rated: Sequence[Scored], after_rounds: int, level: float) -> dict[str, Interval]:
    """Mean scores (bootstrap), the share consistent at first and after each round, Table 5's improvement rates
    (Wilson), each over items; an item's sessions are resampled together."""
    by_item: dict[Any, list[Scored]] = {}
    for v in rated:
        by_item.setdefault(v.row["id"], []).append(v)
    groups = list(by_item.values())
    boot: dict[str, Any] = {"level": level, "seed": DEFAULT_SEED}

    def share(name: str, hit: Callable[[Scored], bool | None]) -> Interval:
        return proportion(name, [[bool(h) for v in g if (h := hit(v)) is not None] for g in groups], **boot)

    out = {
        "mean original score": bootstrap_items("mean", groups, lambda vs: fmean(v.initial for v in vs), **boot),
        "mean final score": bootstrap_items("mean", groups, lambda vs: fmean(v.final for v in vs), **boot),
        "consistent at first evaluation": share("consistent", lambda v: v.initial == 1),
    }
    for label, after in (("after round 1", lambda v: v.scores[1] if len(v.scores) > 1 else v.initial),
                         ("after all rounds", lambda v: v.final)):  # fmt: skip
        if any(v.initial < 1 for v in rated):
            out[f"Table 5 {label} · improvement rate"] = share(
                "improvement rate", lambda v, after=after: after(v) == 1 if v.initial < 1 else None
            )
    if after_rounds > 1:
        for r in range(after_rounds):
            out[f"Fig. 4 consistent after round {r}"] = share(
                "consistent", lambda v, r=r: [x for x in v.scores[: r + 1] if x is not None][-1] == 1
            )
    return out


def _finish(values: Sequence[Scored], shared: dict[str, Any], protocol: str = "dcr", ci: float = 0.0) -> DCRReport:
    """The report; with intervals at the level ``ci`` (0: none) when a candidate was scored."""
    done = [v for v in values if v.verdict]
    rated = [v for v in done if v.initial is not None]
    rounds = max((len(v.scores) for v in rated), default=0)
    after: list[float] = []
    distribution: list[dict[str, int]] = []
    for r in range(rounds):
        last = [[x for x in v.scores[: r + 1] if x is not None][-1] for v in rated]
        after.append(sum(x == 1 for x in last) / len(last))
        distribution.append(histogram(last))
    name, corr = _human_correlation([v.judged for v in done if v.judged is not None])
    first = [(v.initial, v.scores[1] if len(v.scores) > 1 else v.initial) for v in rated]
    intervals = _intervals(rated, rounds, ci) if ci and rated else {}
    if ci and corr is not None:
        intervals |= _correlation_intervals([v.judged for v in done if v.judged is not None], corr, ci)
    return DCRReport(
        protocol=protocol,
        **shared,
        ci=ci if intervals else None,
        ci_seed=DEFAULT_SEED if intervals else None,
        intervals=intervals,
        scored=len(rated),
        unscored=len(done) - len(rated),
        mean_initial_score=sum(v.initial for v in rated) / len(rated) if rated else None,
        mean_final_score=sum(v.final for v in rated) / len(rated) if rated else None,
        consistent_initial=sum(v.initial == 1 for v in rated),
        first_round=_improvement(first) if rated else None,
        all_rounds=_improvement([(v.initial, v.final) for v in rated]) if rated else None,
        consistent_after_round=after,
        score_distribution=distribution,
        stopped=dict(Counter(v.stopped for v in done)),
        sentence_coverage=_total_coverage([v.coverage for v in done if v.coverage is not None]),
        correlation=corr,
        correlation_dataset=name,
        rows=[v.row for v in values],
    )


def _total_coverage(each: list[tuple[int, int, int]]) -> dict[str, int]:
    """The run's sentences over its final candidates, and how many of them DCE evaluated and AMC scored."""
    if not each:
        return {}
    return dict(zip(("sentences", "evaluated", "scored"), (sum(c[i] for c in each) for i in range(3)), strict=True))


def score(sessions: Iterable[SessionRecord], protocol: str = "dcr") -> DCRReport:
    sessions = list(sessions)
    return _finish([scored(s) for s in sessions], counts(sessions), protocol)


report: ReportFold[Scored, DCRReport] = ReportFold(
    session=scored, finish=lambda values, ctx: _finish(values, ctx.counts, ci=ctx.ci)
)
"""The report of a DCR transcript (``voirdire report``): ``report(transcript)``, or folded."""
