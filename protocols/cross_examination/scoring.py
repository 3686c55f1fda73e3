"""Evaluation of examinations against gold answers (LMvLM §4.1, Table 8).

A claim is gold-correct when a gold answer or alias appears in it as a substring (§4.1, case-insensitive here).
The examiner "rejects" a claim when it concludes "incorrect" (inconclusive counts as rejection, §2). Precision,
recall and F1 are for detecting incorrect claims (Tables 4–6) and, for completeness, correct ones (App. C).
"""

from __future__ import annotations

import re
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar, NamedTuple

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, SkipValidation, field_serializer, model_serializer

from voirdire.kit import Report as BaseReport, ReportFold
from voirdire.kit.data import SessionRecord
from voirdire.kit.reports import (
    DEFAULT_SEED,
    PRF,
    Interval,
    bootstrap_f1,
    bootstrap_sums,
    category,
    counts,
    map_values,
    mean_sd,
    precision_recall_f1,
    proportion,
    wilson,
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
    planned: int | None = None  # adaptive Majority: the examinations the full procedure would have run

    @model_serializer(mode="wrap")
    def _planned_only_when_adaptive(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)  # a full procedure's statistics read as before adaptive existed
        if data.get("planned") is None:
            data.pop("planned", None)
        return data


class Report(BaseReport):
    """LMvLM's report: §4.1 precision/recall/F1 against gold answers and the Table 8 statistics."""

    scored: int
    claims_correct_pct: float | None
    reject_incorrect: PRF | None
    accept_correct: PRF | None
    examination: ExaminationStats | None
    # The fold's rows themselves, not a validated copy of each; in a folded report a sequence that reads each row
    # back from the fold's spool when asked, so memory stays flat. The schema and the JSON are the same.
    rows: SkipValidation[list[dict[str, object]]]
    margins: dict[str, int] = Field(
        default_factory=dict, description="LMvLM (Majority): verdicts by vote margin and side, '2–1 reject' -> count"
    )
    intervals: dict[str, Interval] = Field(default_factory=dict)  # claims correct, P/R/F1, Table 8, at ``ci``

    PERCENT_INTERVALS: ClassVar[frozenset[str]] = BaseReport.PERCENT_INTERVALS | {"inconclusive"}

    def text(self) -> str:
        return format_report(self)

    @field_serializer("rows")
    def _rows_as_list(self, rows: Sequence[dict[str, object]]) -> list[dict[str, object]]:
        return rows if isinstance(rows, list) else list(rows)  # read back only where the JSON shows them


def _stat(values: Sequence[float]) -> Stat:
    m, sd = mean_sd(values) if values else (0.0, 0.0)
    return Stat(mean=m, sd=sd)


# One examination as Table 8 needs it: questions, questions per iteration, follow-up iterations, inconclusive.
_Exam = tuple[Any, tuple[Any, ...], Any, bool]


def _exams(outcome: ClaimOutcome) -> tuple[_Exam, ...]:
    return tuple(
        (e.n_questions, tuple(e.questions_per_iteration), e.followup_iterations, e.decision == "inconclusive")
        for e in outcome.examinations
    )


class _Table8:
    """Table 8's numbers of every examination in arrays, with its claim's place among the claims (in order of first
    appearance): what the statistics and their intervals need, without a list per claim."""

    def __init__(self) -> None:
        self.claim = array("q")  # the examination's claim
        # The counts in 4 bytes (a few questions an examination): they are held through the intervals' bootstraps
        self.questions = array("i")  # e[0]
        self.iterations = array("i")  # e[2], follow-up iterations
        self.inconclusive = bytearray()  # e[3]
        self.asked = array("i")  # sum(e[1]): questions over its iterations
        self.rounds = array("i")  # len(e[1])
        self.followup_asked = array("i")  # sum(e[1][1:])
        self.per_iteration = array("d")  # every e[1] value, for the mean ± sd
        self.followups = array("d")  # every e[1][1:] value
        self.claims = 0
        self._place: dict[object, int] | None = {}

    def add(self, claim: object, exams: Sequence[_Exam]) -> None:
        assert self._place is not None
        c = self._place.setdefault(claim, len(self._place))
        for e in exams:
            per_iter = e[1]
            self.claim.append(c)
            self.questions.append(e[0])
            self.iterations.append(e[2])
            self.inconclusive.append(bool(e[3]))
            self.asked.append(sum(per_iter))
            self.rounds.append(len(per_iter))
            self.followup_asked.append(sum(per_iter[1:]))
            self.per_iteration.extend(float(q) for q in per_iter)
            self.followups.extend(float(q) for q in per_iter[1:])

    def close(self) -> None:
        """The claims counted, their ids dropped."""
        assert self._place is not None
        self.claims, self._place = len(self._place), None

    def stats(self) -> ExaminationStats | None:
        """Table 8's means ± sd; the flat lists of iterations are dropped after."""
        n = len(self.claim)
        if not n:
            return None
        found = ExaminationStats(
            examinations=n,
            questions=_stat(array("d", self.questions)),
            followup_questions_per_iteration=_stat(self.followups),
            followup_iterations=_stat(array("d", self.iterations)),
            questions_per_iteration=_stat(self.per_iteration),
            inconclusive_pct=100 * self.inconclusive.count(1) / n,
        )
        self.per_iteration, self.followups = array("d"), array("d")
        return found


class Scored(NamedTuple):
    """What the report keeps of one session: its row, and the Table 8 numbers of its examinations."""

    row: dict[str, object]
    exams: tuple[_Exam, ...]


def scored(s: SessionRecord) -> Scored:
    """The report's fold over one session."""
    v = s.verdict
    if v is None:
        return Scored({"id": s.item_id, "decision": None, "error": s.errors[-1].message if s.errors else None}, ())
    outcome = ClaimOutcome.model_validate(v.statistics)  # once: the row and Table 8 both read it
    stated = outcome.claim
    claim = stated if stated is not None else str(s.item.get("claim") or "")
    g = gold_correct(claim, s.item.get("answers") or [])
    row = {"id": s.item_id, "claim": claim, "decision": category(v.decision), "accepted": v.accepted, "gold": g}
    if v.guarantee is not None and v.guarantee.kind == "vote_margin":  # LMvLM (Majority), §4.1
        row["margin"] = v.guarantee.values.get("margin")
    if outcome.examinations_planned is not None:  # adaptive Majority: what the full procedure would have run
        row["planned"] = outcome.examinations_planned
    return Scored(row, _exams(outcome))


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
    out[f"{label} · F1"] = bootstrap_f1("F1", groups, level=level, seed=DEFAULT_SEED)
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


def _table8_intervals(table: _Table8, level: float) -> dict[str, Interval]:
    """Table 8's means (not their sd, which describes the spread) and the share of inconclusive decisions, over
    claims: a claim's examinations (several under Majority) are resampled together. Each claim's sum and count of
    observations (``bootstrap_sums``: every resample at once) -- the intervals ``bootstrap_means`` gives on the
    claims' lists of observations."""
    import numpy as np

    n = table.claims
    claim = np.frombuffer(table.claim, dtype=np.int64)
    exams = np.bincount(claim, minlength=n)

    def summed(column: array[int]) -> Any:
        return np.bincount(claim, weights=np.frombuffer(column, dtype=np.int32), minlength=n)

    boot: dict[str, Any] = {"level": level, "seed": DEFAULT_SEED}
    rounds = np.frombuffer(table.rounds, dtype=np.int32)
    if (rounds > 1).any():
        followups = bootstrap_sums(
            "mean", summed(table.followup_asked), np.bincount(claim, weights=np.maximum(rounds - 1, 0), minlength=n),
            **boot,
        )  # fmt: skip
    else:  # the table prints 0.0 ± 0.0 for no follow-up iteration at all: no mean to resample
        followups = Interval(name="mean", estimate=0.0, level=level, method="bootstrap BCa over items",
                             n=n, reason="no follow-up iteration in any examination")  # fmt: skip
    per_iteration = bootstrap_sums("mean", summed(table.asked), summed(table.rounds), **boot)
    return {
        "Table 8 · # of questions": bootstrap_sums("mean", summed(table.questions), exams, **boot),
        "Table 8 · # of follow-up questions per iteration": followups,
        "Table 8 · # of follow-up iterations": bootstrap_sums("mean", summed(table.iterations), exams, **boot),
        "Table 8 · # of questions per iteration": per_iteration,
        "Table 8 · inconclusive": _inconclusive(table, exams, boot),
    }


def _inconclusive(table: _Table8, exams: Any, boot: dict[str, Any]) -> Interval:
    """``proportion`` of the claims' inconclusive decisions: Wilson when each claim has one examination, else a
    bootstrap over claims (their lists made here, where they are needed)."""
    if (exams == 1).all():
        return wilson("inconclusive", table.inconclusive.count(1), table.claims, level=boot["level"])
    groups: list[list[bool]] = [[] for _ in range(table.claims)]
    for c, x in zip(table.claim, table.inconclusive, strict=True):
        groups[c].append(bool(x))
    return proportion("inconclusive", groups, **boot)


def _finish(values: Sequence[Scored], protocol: str, shared: dict[str, Any], ci: float = 0.0) -> Report:
    """The report; with intervals at the level ``ci`` (0: none) when any session was scored against gold."""
    gold: list[bool] = []
    rejected: list[bool] = []
    table = _Table8()
    planned, adaptive = 0, False
    for value in values:  # one pass: the values may be read back from the fold's spool
        p = value.row.get("planned")
        adaptive |= p is not None
        planned += p if isinstance(p, int) else len(value.exams)
        g = value.row.get("gold")
        if value.row["decision"] is not None and g is not None:
            gold.append(bool(g))
            rejected.append(not value.row["accepted"])
        if value.exams:
            table.add(value.row["id"], value.exams)
    table.close()
    n = len(gold)
    examination = table.stats()  # before the intervals import scipy: the lists it needs are gone by then
    if examination is not None and adaptive:
        examination.planned = planned
    intervals = _intervals(values, ci) if ci and n else {}
    if ci and len(table.claim):
        intervals |= _table8_intervals(table, ci)
    del table
    rows = map_values(values, _row)
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
        examination=examination,
        rows=rows,
        margins=_margins(rows),
    )


def _row(value: Scored) -> dict[str, object]:
    return value.row


def _margins(rows: Iterable[dict[str, object]]) -> dict[str, int]:
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
    spooled=True,  # a row per session, read back where the report's JSON shows them
    row=_row,
)
"""The report of a cross-examination (or AYS / IDK baseline) transcript: ``report(transcript)``, or folded."""


def format_report(r: Report) -> str:
    sessions, errors = f"{r.sessions} session{'s' * (r.sessions != 1)}", f"{r.errors} error{'s' * (r.errors != 1)}"
    lines = [f"{r.protocol}: {sessions}, {r.scored} scored against gold answers, {errors}"]
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
        ran = f"{e.examinations}"
        if e.planned is not None:
            ran += f" of {e.planned} planned (adaptive Majority: {e.planned - e.examinations} not needed)"
        lines += [
            f"examinations: {ran}   (Table 8 statistics, mean ± sd)",
            f"  # of questions                          {e.questions}",
            f"  # of follow-up questions per iteration  {e.followup_questions_per_iteration}",
            f"  # of follow-up iterations               {e.followup_iterations}",
            f"  # of questions per iteration            {e.questions_per_iteration}",
            f"  % of inconclusive examiner decisions    {e.inconclusive_pct:.1f}%",
        ]
    if r.margins:
        lines.append("vote margins (LMvLM (Majority), §4.1): " + " · ".join(f"{k} {n}" for k, n in r.margins.items()))
    return "\n".join([*lines, *r.interval_lines(), *r.usage_lines()])
