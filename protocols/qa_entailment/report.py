"""The report of a QA grading transcript: per QA system, the grader's judgments against the human judgments.

Computed from the verdicts alone (each session's ``statistics``), so a resumed run, or any transcript read back,
is scored exactly like a fresh one. Per system and pooled ("all"): precision / recall / F1 ("judged correct" =
positive) and accuracy (Table 1); for the entailment grader also both decision variants (Table 11), the hierarchy
counts (Tables 9–10), the partial-mark AUROCs (Tables 3, 13) when partial marks were computed, and how many model
replies could not be parsed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from voirdire.report import Report, counts
from voirdire.transcript import SessionRecord, Transcript, Verdict

from .data import EVOUNA_SYSTEM_NAMES, QAItem
from .hierarchy import DECISION_VARIANTS, HierarchyCell
from .scoring import AurocReport, BinaryScores, partial_mark_aurocs, system_reports

ALL = "all"
EVALUATORS = {"qa_lexical": "lexical", "qa_token_f1": "f1", "qa_entailment": "entailment"}


class SystemEvaluation(BaseModel):
    system: str
    name: str  # the paper's name for an EVOUNA system, else the system itself
    n_items: int  # items of this system in the run
    n_graded: int  # items with a verdict
    n_errors: int  # items whose session failed (no verdict; a resumed run retries them)
    n_scored: int  # graded items with a human judgment
    n_undetermined: int  # scored items the grader could not decide (counted as judged incorrect)
    scores: BinaryScores | None  # None when no graded item has a human judgment
    by_decision: dict[str, BinaryScores | None] | None = None  # entailment: "union" and "minus" (Table 11)
    hierarchy: dict[str, int] | None = None  # entailment: cell counts, Tables 9–10 order


class ReplyStats(BaseModel):
    """Model replies the entailment grader asked for, and how many it could not read."""

    model_calls: int
    parse_failures: int
    failure_rate: float | None
    by_step: dict[str, int]
    items_with_failures: int


class QAReport(Report):
    """Per-system scores against human judgments (Table 1), and for the entailment grader Tables 3, 9–11, 13."""

    evaluator: str
    decision: str | None = None
    n_items: int
    n_graded: int
    n_errors: int
    systems: dict[str, SystemEvaluation]
    overall: SystemEvaluation
    aurocs: dict[str, AurocReport] | None = None
    model_replies: ReplyStats | None = None  # entailment: replies asked for and unreadable, by step

    def text(self) -> str:
        return "\n".join([format_report(self), *self.summary_lines()])

    def metrics(self) -> dict[str, Any]:
        """The scores without the counts every report has, named as ``qa-eval --json`` prints them."""
        fields = self.model_dump(mode="json", exclude=set(Report.model_fields))
        return {key.removeprefix("model_"): value for key, value in fields.items()}


@dataclass(frozen=True)
class _Ranked:
    """A graded answer as the AUROCs see it."""

    system_answer: str
    gold_answers: Sequence[str]
    human_judgment: bool | None
    ranking_scores: Mapping[str, float | None] = field(default_factory=dict)


def _cell(value: str | None) -> HierarchyCell | None:
    return HierarchyCell(value) if value is not None else None


def _evaluate_system(
    system: str, items: Sequence[QAItem], verdicts: Mapping[str, Verdict], entailment: bool
) -> SystemEvaluation:
    graded = [it for it in items if it.id in verdicts]
    stats = [verdicts[it.id].statistics for it in graded]
    judgments = [s.get("judgment") for s in stats]
    # Score under the system's own name; items are relabelled for the pooled "all" row.
    relabelled = [it.model_copy(update={"system": system}) for it in graded]
    cells = [_cell(s.get("cell")) for s in stats] if entailment else None
    report = system_reports(relabelled, judgments, cells).get(system) if graded else None
    by_decision = None
    if entailment and graded:
        by_decision = {}
        for variant in DECISION_VARIANTS:
            variant_judgments = [(s.get("judgments") or {}).get(variant) for s in stats]
            by_decision[variant] = system_reports(relabelled, variant_judgments)[system].scores
    return SystemEvaluation(
        system=system,
        name=EVOUNA_SYSTEM_NAMES.get(system, system),
        n_items=len(items),
        n_graded=len(graded),
        n_errors=len(items) - len(graded),
        n_scored=report.n_scored if report else 0,
        n_undetermined=report.n_undetermined if report else 0,
        scores=report.scores if report else None,
        by_decision=by_decision,
        hierarchy=report.hierarchy if report else None,
    )


def _ranked(item: QAItem, stats: Mapping[str, object]) -> _Ranked:
    indices = [int(i) for i in stats.get("gold_indices") or []]  # type: ignore[attr-defined]
    return _Ranked(
        system_answer=item.system_answer,
        gold_answers=[item.gold_answers[i] for i in indices],
        human_judgment=item.human_judgment,
        ranking_scores=stats.get("ranking_scores") or {},  # type: ignore[arg-type]
    )


def _reply_stats(stats: Iterable[Mapping[str, object]]) -> ReplyStats:
    calls, failures, items_failed = 0, 0, 0
    by_step: Counter[str] = Counter()
    for s in stats:
        calls += int(s.get("model_calls") or 0)  # type: ignore[call-overload]
        found = list(s.get("parse_failures") or [])  # type: ignore[call-overload]
        failures += len(found)
        items_failed += bool(found)
        by_step.update(str(f.get("step")) for f in found)
    return ReplyStats(
        model_calls=calls,
        parse_failures=failures,
        failure_rate=failures / calls if calls else None,
        by_step=dict(by_step),
        items_with_failures=items_failed,
    )


def score(sessions: Sequence[SessionRecord], protocol: str) -> QAReport:
    """Score the sessions (one per graded item); a session without a verdict counts as an error."""
    items = [QAItem.model_validate(s.item) for s in sessions]
    verdicts = {it.id: s.verdict for it, s in zip(items, sessions, strict=True) if s.verdict is not None}
    evaluator = EVALUATORS.get(protocol, "entailment")
    entailment = evaluator == "entailment"
    by_system: dict[str, list[QAItem]] = {}
    for it in items:
        by_system.setdefault(it.system, []).append(it)
    graded = [it for it in items if it.id in verdicts]
    stats = [verdicts[it.id].statistics for it in graded]
    aurocs = None
    if entailment and any(s.get("ranking_scores") for s in stats):
        aurocs = partial_mark_aurocs([_ranked(it, s) for it, s in zip(graded, stats, strict=True)])
    return QAReport(
        protocol=protocol,
        **counts(sessions),  # type: ignore[arg-type]
        evaluator=evaluator,
        decision=next((str(s["decision_variant"]) for s in stats if s.get("decision_variant")), None),
        n_items=len(items),
        n_graded=len(graded),
        n_errors=len(items) - len(graded),
        systems={s: _evaluate_system(s, its, verdicts, entailment) for s, its in by_system.items()},
        overall=_evaluate_system(ALL, items, verdicts, entailment),
        aurocs=aurocs,
        model_replies=_reply_stats(stats) if entailment else None,
    )


def report(transcript: Transcript) -> QAReport:
    """The report of a ``qa_entailment``, ``qa_lexical`` or ``qa_token_f1`` transcript."""
    protocol = transcript.header.protocol if transcript.header else "qa_entailment"
    r = score(list(transcript.sessions.values()), protocol)
    r.transcript = transcript.path
    return r


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}"


def format_report(report: QAReport) -> str:
    """The report as plain-text tables (per system, then pooled)."""
    rows = [*report.systems.values()]
    if len(rows) != 1:
        rows.append(report.overall)
    width = max(12, *(len(r.name) for r in rows))
    head = f"{'system':<{width}} {'n':>6} {'undet':>6} {'TP':>6} {'FP':>6} {'FN':>6} {'TN':>6} "
    head += f"{'P':>6} {'R':>6} {'F1':>6} {'Acc':>6}"
    title = f"evaluator: {report.evaluator}" + (f" (decision: {report.decision})" if report.decision else "")
    lines = [title, head]
    for r in rows:
        s = r.scores
        if s is None:
            lines.append(f"{r.name:<{width}} {r.n_graded:>6}  (no human judgments to score against)")
            continue
        lines.append(
            f"{r.name:<{width}} {s.n:>6} {r.n_undetermined:>6} {s.tp:>6} {s.fp:>6} {s.fn:>6} {s.tn:>6} "
            f"{_pct(s.precision):>6} {_pct(s.recall):>6} {_pct(s.f1):>6} {_pct(s.accuracy):>6}"
        )
    if report.evaluator == "entailment":
        cells = [c.value for c in sorted(HierarchyCell, key=lambda c: c.rank)]
        lines += ["", "hierarchy (Tables 9–10): answers per cell"]
        lines.append(f"{'system':<{width}} " + " ".join(f"({i}) {c:>{len(c)}}" for i, c in enumerate(cells, 1)))
        lines[-1] += "  undetermined"
        for r in rows:
            h = r.hierarchy or {}
            lines.append(
                f"{r.name:<{width}} "
                + " ".join(f"{h.get(c, 0):>{len(c) + 4}}" for c in cells)
                + f"  {h.get('undetermined', 0):>12}"
            )
        lines += ["", "decision variants (Table 11): F1 / Acc"]
        lines.append(f"{'system':<{width}} {'union (∪)':>14} {'minus (−)':>14}")
        for r in rows:
            cols = []
            for variant in DECISION_VARIANTS:
                s = (r.by_decision or {}).get(variant)
                cols.append(f"{_pct(s.f1)} / {_pct(s.accuracy)}" if s else "–")
            lines.append(f"{r.name:<{width}} {cols[0]:>14} {cols[1]:>14}")
    if report.aurocs:
        lines += ["", "partial marks: AUROC against human judgments (Tables 3, 13)"]
        for a in report.aurocs.values():
            if a.auroc is not None:
                value = f"{a.auroc:.3f}"
            else:
                value = "undefined (no answer ranked)" if a.n == 0 else "undefined (one human label only)"
            lines.append(f"  {a.scheme:<20} {value:>8}   n={a.n}  left out={a.n_left_out}")
    if report.model_replies is not None:
        r = report.model_replies
        rate = "–" if r.failure_rate is None else f"{100 * r.failure_rate:.1f}%"
        steps = ", ".join(f"{k} {v}" for k, v in sorted(r.by_step.items())) or "none"
        lines += [
            "",
            f"model replies: {r.model_calls}, unparseable: {r.parse_failures} ({rate}; {steps}); "
            f"items with an unparseable reply: {r.items_with_failures}",
        ]
    if report.n_errors:
        lines.append(f"sessions that failed (not scored; re-run to retry): {report.n_errors}")
    return "\n".join(lines)
