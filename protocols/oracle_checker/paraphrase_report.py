"""The report of a paraphrase-checker transcript (§5.2): the oracle's decisions against the labels (Table 2), the
Yes-prover's acceptance by label and by decision (Table 3), and the No-checker's categories with their acceptance
(Table 5)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

from pydantic import Field

from voirdire.kit import Report, ReportFold, Statistics
from voirdire.kit.data import SessionRecord
from voirdire.kit.reports import DEFAULT_SEED, Context, Interval, category, proportion


class ParaphraseReport(Report):
    decisions: dict[str, int] = Field(default_factory=dict)
    agreement: float | None = Field(None, description="oracle decisions equal to the labels (Table 2)")
    yes_accepted: dict[str, str] = Field(default_factory=dict, description="Yes-prover acceptance (Table 3)")
    no_categories: dict[str, str] = Field(default_factory=dict, description="category -> accepted/n (Table 5)")
    rows: list[dict[str, Any]] = Field(default_factory=list)
    intervals: dict[str, Interval] = Field(
        default_factory=dict, description="the agreement and each acceptance (Tables 2, 3, 5) with its interval"
    )

    PERCENT_INTERVALS: ClassVar[frozenset[str]] = Report.PERCENT_INTERVALS | {"agreement", "acceptance"}

    def text(self) -> str:
        lines = self.summary_lines()
        lines.append("decisions: " + ", ".join(f"{k} {v}" for k, v in sorted(self.decisions.items())))
        if self.agreement is not None:
            lines.append(f"oracle agrees with the labels on {100 * self.agreement:.1f}% (Table 2)")
        if self.yes_accepted:
            lines.append(
                "Yes-prover accepted (Table 3): " + ", ".join(f"{k} {v}" for k, v in self.yes_accepted.items())
            )
        if self.no_categories:
            lines.append("No-checker (Table 5): " + ", ".join(f"{k} {v}" for k, v in self.no_categories.items()))
        return "\n".join([*lines, *self.interval_lines(), *self.usage_lines()])


class ParaphraseOutcome(Statistics):
    """A paraphrase verdict's statistics as the report reads them (§4): the checker's answer, and for a "no" the
    category of the pair (A/Ā: aligned, I/Ī: indifferentiable paraphrases; Table 5)."""

    answer: Literal["yes", "no"] | None = None
    category: str | None = None


def row(s: SessionRecord) -> dict[str, Any] | None:
    """The report's fold over one session: the row of a session with a verdict."""
    v = s.verdict
    if v is None:
        return None
    o = ParaphraseOutcome.model_validate(v.statistics)
    return {"id": s.item_id, "label": category(s.item.get("label")), "decision": category(v.decision),
            "accepted": v.accepted, "answer": category(o.answer), "category": category(o.category)}  # fmt: skip


def _finish(values: Sequence[dict[str, Any] | None], ctx: Context) -> ParaphraseReport:
    rows = [r for r in values if r is not None]
    decisions: Counter[str] = Counter(r["decision"] for r in rows)
    out = ParaphraseReport(
        protocol=ctx.header.protocol if ctx.header else "oracle_paraphrase",
        transcript=ctx.path, decisions=dict(decisions), rows=rows,
        **ctx.counts,
    )  # fmt: skip
    labelled = [r for r in rows if r["label"] in ("yes", "no") and r["answer"] in ("yes", "no")]
    shares: dict[str, tuple[str, list[tuple[Any, bool]]]] = {}  # printed as -> (what, (item, hit) per session)
    if labelled:
        out.agreement = sum(r["label"] == r["answer"] for r in labelled) / len(labelled)
        shares["agreement with the labels"] = ("agreement", [(r["id"], r["label"] == r["answer"]) for r in labelled])
    yes = [r for r in rows if r["answer"] == "yes"]
    for name, group in (("oracle yes", yes), ("labelled yes", [r for r in yes if r["label"] == "yes"]),
                        ("labelled no", [r for r in yes if r["label"] == "no"])):  # fmt: skip
        if group:
            out.yes_accepted[name] = f"{sum(bool(r['accepted']) for r in group)}/{len(group)}"
            shares[f"Yes-prover accepted · {name}"] = ("acceptance", [(r["id"], r["accepted"]) for r in group])
    for cat in ("AI", "ĀI", "AĪ", "ĀĪ"):
        group = [r for r in rows if r["answer"] == "no" and r["category"] == cat]
        if group:
            out.no_categories[cat] = f"{sum(bool(r['accepted']) for r in group)}/{len(group)}"
            shares[f"No-checker accepted · {cat}"] = ("acceptance", [(r["id"], r["accepted"]) for r in group])
    if ctx.ci and shares:
        out.intervals = {key: _share(name, hits, ctx.ci) for key, (name, hits) in shares.items()}
        out.ci, out.ci_seed = ctx.ci, DEFAULT_SEED
    return out


def _share(name: str, hits: list[tuple[Any, bool]], level: float) -> Interval:
    """A share with its interval: Wilson over items, or a bootstrap over items when an item has several sessions."""
    by_item: dict[Any, list[bool]] = {}
    for item, hit in hits:
        by_item.setdefault(item, []).append(bool(hit))
    return proportion(name, list(by_item.values()), level=level, seed=DEFAULT_SEED)


report: ReportFold[dict[str, Any] | None, ParaphraseReport] = ReportFold(session=row, finish=_finish)
"""The report of a paraphrase-checker transcript: ``report(transcript)``, or folded."""
