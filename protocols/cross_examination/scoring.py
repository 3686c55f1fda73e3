"""Evaluation of examinations against gold answers (LMvLM §4.1, Table 8).

A claim is gold-correct when a gold answer or alias appears in it as a substring (§4.1, case-insensitive here).
The examiner "rejects" a claim when it concludes "incorrect" (inconclusive counts as rejection, §2). Precision,
recall and F1 are for detecting incorrect claims (Tables 4–6) and, for completeness, correct ones (App. C).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar, NamedTuple

from pydantic import BaseModel, Field, SkipValidation

from voirdire.kit import (
    DEFAULT_SEED,
    PRF,
    Interval,
    ReportFold,
    SessionRecord,
    bootstrap_items,
    bootstrap_means,
    category,
    counts,
    f1_of_pairs,
    mean_sd,
    precision_recall_f1,
    proportion,
)
from voirdire.kit import (
    Report as BaseReport,
)

from .outcome import ClaimOutcome


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def gold_correct(claim: str, answers: Iterable[str]) -> bool | None:
    """§4.1: correct iff the gold answer or one of its aliases is a sub-string of the claim; None if no gold."""
    golds = [_norm(a) for a in answers if a and a.strip()]
    if not golds:
        return None
    text = _norm(claim)
    return any(g in text for g in golds)


class Stat(BaseModel):
    mean: float
    sd: float

    def __str__(self) -> str:
        return f"{self.mean:.1f} ± {self.sd:.1f}"


class ExaminationStats(BaseModel):
    """Table 8: questions, follow-up questions per iteration, follow-up iterations, questions per iteration,
    % inconclusive examiner decisions (per examination)."""

    examinations: int
    questions: Stat
    followup_questions_per_iteration: Stat
    followup_iterations: Stat
    questions_per_iteration: Stat
    inconclusive_pct: float


class Report(BaseReport):
    """LMvLM's report: §4.1 precision/recall/F1 against gold answers and the Table 8 statistics."""

    scored: int
    claims_correct_pct: float | None
    reject_incorrect: PRF | None
    accept_correct: PRF | None
    examination: ExaminationStats | None
    # The fold's rows themselves, not a validated copy of each (a dict per session at the end of a run's report:
    # docs/performance.md, flat memory); the schema and the JSON are the same.
    rows: SkipValidation[list[dict[str, object]]]
    margins: dict[str, int] = Field(
        default_factory=dict, description="LMvLM (Majority): verdicts by vote margin and side, '2–1 reject' -> count"
    )
    intervals: dict[str, Interval] = Field(default_factory=dict)  # claims correct, P/R/F1, Table 8, at ``ci``

    PERCENT_INTERVALS: ClassVar[frozenset[str]] = BaseReport.PERCENT_INTERVALS | {"inconclusive"}

    def text(self) -> str:
        return format_report(self)


def _stat(values: list[float]) -> Stat:
    m, sd = mean_sd(values) if values else (0.0, 0.0)
    return Stat(mean=m, sd=sd)


# One examination as Table 8 needs it: questions, questions per iteration, follow-up iterations, inconclusive.
_Exam = tuple[Any, tuple[Any, ...], Any, bool]


def _exams(s: SessionRecord) -> tuple[_Exam, ...]:
    if s.verdict is None:
        return ()
    return tuple(
        (e.n_questions, tuple(e.questions_per_iteration), e.followup_iterations, e.decision == "inconclusive")
        for e in ClaimOutcome.model_validate(s.verdict.statistics).examinations
    )


def _table8(exams: list[_Exam]) -> ExaminationStats | None:
    if not exams:
        return None
    per_iter = [float(q) for e in exams for q in e[1]]
    followup = [float(q) for e in exams for q in e[1][1:]]
    return ExaminationStats(
        examinations=len(exams),
        questions=_stat([float(e[0]) for e in exams]),
        followup_questions_per_iteration=_stat(followup),
        followup_iterations=_stat([float(e[2]) for e in exams]),
        questions_per_iteration=_stat(per_iter),
        inconclusive_pct=100 * sum(e[3] for e in exams) / len(exams),
    )


class Scored(NamedTuple):
    """What the report keeps of one session: its row, and the Table 8 numbers of its examinations."""

    row: dict[str, object]
    exams: tuple[_Exam, ...]


def scored(s: SessionRecord) -> Scored:
    """The report's fold over one session."""
    v = s.verdict
    if v is None:
        return Scored({"id": s.item_id, "decision": None, "error": s.errors[-1].message if s.errors else None}, ())
    stated = ClaimOutcome.model_validate(v.statistics).claim
    claim = stated if stated is not None else str(s.item.get("claim") or "")
    g = gold_correct(claim, s.item.get("answers") or [])
    row = {"id": s.item_id, "claim": claim, "decision": category(v.decision), "accepted": v.accepted, "gold": g}
    if v.guarantee is not None and v.guarantee.kind == "vote_margin":  # LMvLM (Majority), §4.1
        row["margin"] = v.guarantee.values.get("margin")
    return Scored(row, _exams(s))


Pair = tuple[bool, bool]  # (positive by gold, predicted positive) of one scored session



def prf_intervals(label: str, groups: Sequence[Sequence[Pair]], level: float) -> dict[str, Interval]:
    """Intervals on P, R and F1 over items (``groups``: one list of pairs per item, its sessions): precision and
    recall are proportions (of the predicted, of the gold positives: Wilson, or a bootstrap over items when an item
    has several sessions), F1 a bootstrap over items (BCa)."""
    predicted = [[g for g, p in pairs if p] for pairs in groups]
    positive = [[p for g, p in pairs if g] for pairs in groups]
    out = {}
    for name, obs, none in (("precision", predicted, "nothing predicted"), ("recall", positive, "no gold positive")):
        if any(obs):
            out[f"{label} · {name}"] = proportion(name, obs, level=level, seed=DEFAULT_SEED)
        else:  # P or R is printed as 0 (an empty denominator): say why there is no interval rather than "nan"
            out[f"{label} · {name}"] = Interval(
                name=name, estimate=0.0, level=level, method="Wilson", n=0, reason=f"{none}: an empty denominator"
            )
    out[f"{label} · F1"] = bootstrap_items("F1", groups, f1_of_pairs, level=level, seed=DEFAULT_SEED)
    return out


def _intervals(values: Sequence[Scored], level: float) -> dict[str, Interval]:
    """Claims correct, reject-incorrect and accept-correct P/R/F1, resampling items (a claim's sessions)."""
    by_item: dict[object, list[tuple[bool, bool]]] = {}  # (gold correct, rejected) per scored session
    for value in values:
        g = value.row.get("gold")
        if value.row["decision"] is not None and g is not None:
            by_item.setdefault(value.row["id"], []).append((bool(g), not value.row["accepted"]))
    groups = list(by_item.values())
    out = {"claims correct": proportion("claims correct", [[g for g, _ in obs] for obs in groups], level=level)}
    out |= prf_intervals("reject incorrect", [[(not g, r) for g, r in obs] for obs in groups], level)
    out |= prf_intervals("accept correct", [[(g, not r) for g, r in obs] for obs in groups], level)
    return out


def _table8_intervals(values: Sequence[Scored], level: float) -> dict[str, Interval]:
    """Table 8's means (not their sd, which describes the spread) and the share of inconclusive decisions, over
    claims: a claim's examinations (several under Majority) are resampled together."""
    by_item: dict[object, list[_Exam]] = {}
    for value in values:
        if value.exams:
            by_item.setdefault(value.row["id"], []).extend(value.exams)
    groups = list(by_item.values())

    def mean_of(values_of: Callable[[_Exam], Iterable[Any]]) -> list[list[float]]:
        """Each claim's observations, for the mean over its examinations (``bootstrap_means``: every resample at
        once, where a statistic per resample cost seconds of CPU at 1,000 claims)."""
        return [[float(x) for e in exams for x in values_of(e)] for exams in groups]

    boot: dict[str, Any] = {"level": level, "seed": DEFAULT_SEED}
    if any(len(e[1]) > 1 for g in groups for e in g):
        followups = bootstrap_means("mean", mean_of(lambda e: e[1][1:]), **boot)
    else:  # the table prints 0.0 ± 0.0 for no follow-up iteration at all: no mean to resample
        followups = Interval(name="mean", estimate=0.0, level=level, method="bootstrap BCa over items",
                             n=len(groups), reason="no follow-up iteration in any examination")  # fmt: skip
    return {
        "Table 8 · # of questions": bootstrap_means("mean", mean_of(lambda e: (e[0],)), **boot),
        "Table 8 · # of follow-up questions per iteration": followups,
        "Table 8 · # of follow-up iterations": bootstrap_means("mean", mean_of(lambda e: (e[2],)), **boot),
        "Table 8 · # of questions per iteration": bootstrap_means("mean", mean_of(lambda e: e[1]), **boot),
        "Table 8 · inconclusive": proportion("inconclusive", [[bool(e[3]) for e in g] for g in groups], **boot),
    }


def _finish(values: Sequence[Scored], protocol: str, shared: dict[str, Any], ci: float = 0.0) -> Report:
    """The report; with intervals at the level ``ci`` (0: none) when any session was scored against gold."""
    gold: list[bool] = []
    rejected: list[bool] = []
    for value in values:
        g = value.row.get("gold")
        if value.row["decision"] is not None and g is not None:
            gold.append(bool(g))
            rejected.append(not value.row["accepted"])
    n = len(gold)
    intervals = _intervals(values, ci) if ci and n else {}
    if ci and any(value.exams for value in values):
        intervals |= _table8_intervals(values, ci)
    return Report(
        ci=ci if intervals else None,
        ci_seed=DEFAULT_SEED if intervals else None,
        intervals=intervals,
        protocol=protocol,
        **shared,
        scored=n,
        claims_correct_pct=100 * sum(gold) / n if n else None,
        reject_incorrect=precision_recall_f1([not g for g in gold], rejected) if n else None,
        accept_correct=precision_recall_f1(gold, [not r for r in rejected]) if n else None,
        examination=_table8([e for value in values for e in value.exams]),
        rows=[value.row for value in values],
        margins=_margins([value.row for value in values]),
    )


def _margins(rows: list[dict[str, object]]) -> dict[str, int]:
    """How many verdicts each vote margin gave, by side: a split vote (2–1) is a weaker verdict than 3–0 (§4.1)."""
    counted = Counter(
        f"{r['margin']} {'accept' if r['accepted'] else 'reject'}" for r in rows if r.get("margin") is not None
    )
    return dict(sorted(counted.items(), key=lambda kv: (kv[0].split()[1], kv[0])))


def score(sessions: Iterable[SessionRecord], protocol: str = "cross_examination") -> Report:
    sessions = list(sessions)
    return _finish([scored(s) for s in sessions], protocol, counts(sessions))


report: ReportFold[Scored, Report] = ReportFold(
    session=scored,
    finish=lambda values, ctx: _finish(
        values, ctx.header.protocol if ctx.header else "cross_examination", ctx.counts, ctx.ci
    ),
)
"""The report of a cross-examination (or AYS / IDK baseline) transcript: ``report(transcript)``, or folded."""


def format_report(r: Report) -> str:
    lines = [f"{r.protocol}: {r.sessions} sessions, {r.scored} scored against gold answers, {r.errors} errors"]
    if r.parse_failures:
        lines.append("parse failures: " + r.parse_failure_rates())
    if r.claims_correct_pct is not None:
        lines.append(f"claims correct (gold alias match): {r.claims_correct_pct:.1f}%")
    for label, prf in (("reject incorrect", r.reject_incorrect), ("accept correct", r.accept_correct)):
        if prf is not None:
            lines.append(
                f"{label:17s} P {100 * prf.precision:5.1f}  R {100 * prf.recall:5.1f}  F1 {100 * prf.f1:5.1f}"
                f"   (gold {prf.support}, predicted {prf.predicted})"
            )
    e = r.examination
    if e is not None:
        lines += [
            f"examinations: {e.examinations}   (Table 8 statistics, mean ± sd)",
            f"  # of questions                          {e.questions}",
            f"  # of follow-up questions per iteration  {e.followup_questions_per_iteration}",
            f"  # of follow-up iterations               {e.followup_iterations}",
            f"  # of questions per iteration            {e.questions_per_iteration}",
            f"  % of inconclusive examiner decisions    {e.inconclusive_pct:.1f}%",
        ]
    if r.margins:
        lines.append("vote margins (LMvLM (Majority), §4.1): " + " · ".join(f"{k} {n}" for k, n in r.margins.items()))
    return "\n".join([*lines, *r.interval_lines(), *r.usage_lines()])
