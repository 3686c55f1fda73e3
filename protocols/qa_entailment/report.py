"""The report of a QA grading transcript: per QA system, the grader's judgments against the human judgments.

Computed from the verdicts alone (each session's ``statistics``), so a resumed run, or any transcript read back,
is scored exactly like a fresh one. Per system and pooled ("all"): precision / recall / F1 ("judged correct" =
positive) and accuracy (Table 1); for the entailment grader also both decision variants (Table 11), the hierarchy
counts (Tables 9–10), the partial-mark AUROCs (Tables 3, 13) when partial marks were computed, and how many model
replies could not be parsed.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, NamedTuple

from pydantic import BaseModel, Field

from voirdire.kit import Report, ReportFold
from voirdire.kit.data import SessionRecord
from voirdire.kit.reports import DEFAULT_SEED, Interval, bootstrap_f1, bootstrap_items, category, counts, proportion

from .data import EVOUNA_SYSTEM_NAMES, QAItem
from .graded import QAOutcome
from .hierarchy import DECISION_VARIANTS, HierarchyCell
from .scoring import AurocReport, BinaryScores, scheme_aurocs, system_reports
from .token_f1 import max_token_f1

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
    # "<system> · precision|recall|F1|accuracy" for each row of Table 1, "AUROC · <scheme>": at the level ``ci``
    intervals: dict[str, Interval] = Field(default_factory=dict)

    def text(self) -> str:
        return "\n".join([format_report(self), *self.summary_lines(), *self.interval_lines(), *self.usage_lines()])

    def metrics(self) -> dict[str, Any]:
        """The scores without the counts every report has, named as ``qa-eval --json`` prints them."""
        shared = set(Report.model_fields) - {"ci", "ci_seed", "intervals"}  # the intervals belong with the scores
        fields = self.model_dump(mode="json", exclude=shared)
        return {key.removeprefix("model_"): value for key, value in fields.items()}


class Judged(NamedTuple):
    """What the scores need of one verdict's statistics."""

    judgment: Any
    cell: Any
    variants: tuple[Any, ...]  # the judgment under each decision variant (Table 11), DECISION_VARIANTS order
    decision_variant: Any
    ranking_scores: Mapping[str, float | None]
    token_f1: float  # best token F1 of the answer against the gold answers the grader used (AUROC baseline)
    model_calls: int
    failure_steps: tuple[str, ...]  # the step of each unreadable model reply


class Graded(NamedTuple):
    """What the report keeps of one session: its item's id, system and human judgment, and its verdict's
    statistics as ``Judged`` (None without a verdict)."""

    id: str
    system: str
    human_judgment: bool | None
    judged: Judged | None


_NO_SCORES: Mapping[str, float | None] = MappingProxyType({})  # one empty mapping for every answer without marks


def _ranking(scores: Mapping[str, float | None] | None) -> Mapping[str, float | None]:
    """An answer's partial-mark ranking scores, the schemes' names held once for all answers."""
    return {category(k): x for k, x in scores.items()} if scores else _NO_SCORES


def _cell(value: str | None) -> HierarchyCell | None:
    return HierarchyCell(value) if value is not None else None


def graded(s: SessionRecord) -> Graded:
    """The report's fold over one session."""
    item = QAItem.model_validate(s.item)
    v = s.verdict
    system = category(item.system)
    item_id = s.session_id if item.id == s.session_id else item.id  # the session id is the item's: one string
    if v is None:
        return Graded(item_id, system, item.human_judgment, None)
    st = QAOutcome.model_validate(v.statistics)
    judged = Judged(
        judgment=st.judgment,
        cell=category(st.cell),
        variants=tuple(st.judgments.get(variant) for variant in DECISION_VARIANTS),
        decision_variant=category(st.decision_variant),
        ranking_scores=_ranking(st.ranking_scores),
        token_f1=max_token_f1(item.system_answer, [item.gold_answers[i] for i in st.gold_indices]),
        model_calls=st.model_calls,
        failure_steps=tuple(category(str(f.get("step"))) for f in st.parse_failures),
    )
    return Graded(item_id, system, item.human_judgment, judged)


def _evaluate_system(
    system: str, items: Sequence[Graded], verdicts: Mapping[str, Judged], entailment: bool
) -> SystemEvaluation:
    graded = [it for it in items if it.id in verdicts]
    stats = [verdicts[it.id] for it in graded]
    judgments = [s.judgment for s in stats]
    # Score under the system's own name; items are relabelled for the pooled "all" row (only there: a system's own
    # items need no copy).
    relabelled = graded if all(it.system == system for it in graded) else [it._replace(system=system) for it in graded]
    cells = [_cell(s.cell) for s in stats] if entailment else None
    report = system_reports(relabelled, judgments, cells).get(system) if graded else None
    by_decision = None
    if entailment and graded:
        by_decision = {}
        for k, variant in enumerate(DECISION_VARIANTS):
            variant_judgments = [s.variants[k] for s in stats]
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


def _reply_stats(stats: Iterable[Judged]) -> ReplyStats:
    calls, failures, items_failed = 0, 0, 0
    by_step: Counter[str] = Counter()
    for s in stats:
        calls += s.model_calls
        failures += len(s.failure_steps)
        items_failed += bool(s.failure_steps)
        by_step.update(s.failure_steps)
    return ReplyStats(
        model_calls=calls,
        parse_failures=failures,
        failure_rate=failures / calls if calls else None,
        by_step=dict(by_step),
        items_with_failures=items_failed,
    )


Pair = tuple[bool, bool]  # (correct by the human judgment, judged correct) of one graded answer



def _auroc(pairs: list[tuple[bool, float]]) -> float:
    """AUROC as the Mann-Whitney U over average ranks (ties count 1/2, as scikit-learn's, which gives the point
    estimate); nan with one class. Rank-based so that thousands of resamples take well under a second."""
    from scipy.stats import rankdata

    positives = sum(1 for y, _ in pairs if y)
    negatives = len(pairs) - positives
    if not positives or not negatives:
        return math.nan
    ranks = rankdata([x for _, x in pairs])
    u = sum(r for r, (y, _) in zip(ranks, pairs, strict=True) if y) - positives * (positives + 1) / 2
    return float(u / (positives * negatives))


def _row_intervals(name: str, groups: Sequence[Sequence[Pair]], level: float) -> dict[str, Interval]:
    """P, R, F1 and accuracy of one row of Table 1, over items: proportions by Wilson (or a bootstrap over items
    when an item has several sessions), F1 by a BCa bootstrap over items."""
    out = {}
    for metric, obs, none in (
        ("precision", [[h for h, p in g if p] for g in groups], "no answer judged correct"),
        ("recall", [[p for h, p in g if h] for g in groups], "no answer correct by the human judgments"),
    ):
        if any(obs):
            out[f"{name} · {metric}"] = proportion(metric, obs, level=level, seed=DEFAULT_SEED)
        else:  # printed as 0 (an empty denominator): say why there is no interval rather than "nan"
            out[f"{name} · {metric}"] = Interval(
                name=metric, estimate=0.0, level=level, method="Wilson", n=0, reason=f"{none}: an empty denominator"
            )
    out[f"{name} · F1"] = bootstrap_f1("F1", groups, level=level, seed=DEFAULT_SEED)
    out[f"{name} · accuracy"] = proportion("accuracy", [[h == p for h, p in g] for g in groups], level=level)
    return out


def _intervals(
    rows: Sequence[tuple[str, Sequence[Graded]]], verdicts: Mapping[str, Judged], level: float
) -> dict[str, Interval]:
    """Each printed row's P/R/F1/accuracy, resampling items (an item's sessions stay together); for the entailment
    grader also each decision variant's F1 and accuracy (Table 11)."""
    out: dict[str, Interval] = {}
    for name, items in rows:
        groups = _pairs(items, verdicts, lambda s: s.judgment)
        if groups:
            out |= _row_intervals(name, groups, level)
    return out


def _variant_intervals(
    rows: Sequence[tuple[str, Sequence[Graded]]], verdicts: Mapping[str, Judged], level: float
) -> dict[str, Interval]:
    """Table 11: each row's F1 and accuracy under each decision variant."""
    out: dict[str, Interval] = {}
    for name, items in rows:
        for k, variant in enumerate(DECISION_VARIANTS):
            groups = _pairs(items, verdicts, lambda s, k=k: s.variants[k])
            if groups:
                out[f"{name} · {variant} · F1"] = bootstrap_f1("F1", groups, level=level, seed=DEFAULT_SEED)
                out[f"{name} · {variant} · accuracy"] = proportion(
                    "accuracy", [[h == p for h, p in g] for g in groups], level=level, seed=DEFAULT_SEED
                )
    return out


def _pairs(items: Sequence[Graded], verdicts: Mapping[str, Judged], judgment: Any) -> list[list[Pair]]:
    """(human judgment, judged correct) per session of each item with both; an undetermined judgment counts as
    judged incorrect, as the scores count it."""
    by_item: dict[str, list[Pair]] = {}
    for it in items:
        if it.id in verdicts and it.human_judgment is not None:
            by_item.setdefault(it.id, []).append((bool(it.human_judgment), bool(judgment(verdicts[it.id]))))
    return list(by_item.values())


def _auroc_intervals(
    items: Sequence[Graded], verdicts: Mapping[str, Judged], schemes: Iterable[str], level: float
) -> dict[str, Interval]:
    """The AUROC of each partial-mark scheme (and the token-F1 baseline), a BCa bootstrap over items."""
    out = {}
    for scheme in schemes:
        by_item: dict[str, list[tuple[bool, float]]] = {}
        for it in items:
            s = verdicts.get(it.id)
            if s is None or it.human_judgment is None:
                continue
            score = s.token_f1 if scheme == "token_f1" else s.ranking_scores.get(scheme)
            if score is not None:
                by_item.setdefault(it.id, []).append((bool(it.human_judgment), float(score)))
        out[f"AUROC · {scheme}"] = bootstrap_items(
            "AUROC", list(by_item.values()), _auroc, level=level, seed=DEFAULT_SEED
        )
    return out


def _finish(items: Sequence[Graded], protocol: str, shared: dict[str, Any], ci: float = 0.0) -> QAReport:
    verdicts = {it.id: it.judged for it in items if it.judged is not None}
    evaluator = EVALUATORS.get(protocol, "entailment")
    entailment = evaluator == "entailment"
    by_system: dict[str, list[Graded]] = {}
    for it in items:
        by_system.setdefault(it.system, []).append(it)
    graded = [it for it in items if it.id in verdicts]
    stats = [verdicts[it.id] for it in graded]
    aurocs = None
    if entailment and any(s.ranking_scores for s in stats):
        judged = [(s.ranking_scores, s.token_f1, bool(it.human_judgment))
                  for it, s in zip(graded, stats, strict=True) if it.human_judgment is not None]  # fmt: skip
        aurocs = scheme_aurocs(judged)
    intervals: dict[str, Interval] = {}
    if ci:
        rows = [(EVOUNA_SYSTEM_NAMES.get(s, s), its) for s, its in by_system.items()]
        if len(rows) != 1:  # the pooled row, as the table prints it
            rows.append((ALL, items))
        intervals = _intervals(rows, verdicts, ci)
        if entailment:
            intervals |= _variant_intervals(rows, verdicts, ci)
        if aurocs:
            intervals |= _auroc_intervals(items, verdicts, aurocs, ci)
    return QAReport(
        protocol=protocol,
        **shared,
        ci=ci if intervals else None,
        ci_seed=DEFAULT_SEED if intervals else None,
        intervals=intervals,
        evaluator=evaluator,
        decision=next((str(s.decision_variant) for s in stats if s.decision_variant), None),
        n_items=len(items),
        n_graded=len(graded),
        n_errors=len(items) - len(graded),
        systems={s: _evaluate_system(s, its, verdicts, entailment) for s, its in by_system.items()},
        overall=_evaluate_system(ALL, items, verdicts, entailment),
        aurocs=aurocs,
        model_replies=_reply_stats(stats) if entailment else None,
    )


def score(sessions: Sequence[SessionRecord], protocol: str) -> QAReport:
    """Score the sessions (one per graded item); a session without a verdict counts as an error."""
    return _finish([graded(s) for s in sessions], protocol, counts(sessions))


report: ReportFold[Graded, QAReport] = ReportFold(
    session=graded,
    finish=lambda values, ctx: _finish(
        values, ctx.header.protocol if ctx.header else "qa_entailment", ctx.counts, ctx.ci
    ),
)
"""The report of a ``qa_entailment``, ``qa_lexical`` or ``qa_token_f1`` transcript: ``report(transcript)``, or
folded."""


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
