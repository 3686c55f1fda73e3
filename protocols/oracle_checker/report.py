"""The report of a linearity-checker transcript: what §5.1 measures, from the verdicts and model calls alone.

- per-sentence acceptance (Fig. 6: 79.54% of 5,000 DocRED sentences) and per-entity acceptance (entities of
  accepted sentences over all tested entities, Fig. 6: 71.2%);
- against the labelled entities of DocRED items (Fig. 6): how many labelled entities the oracle extracted, and how
  many tested entities are labelled and accepted;
- the means of Table 1's measures Con_o, Con_rs, A_test, A_rate, #E and their Spearman correlations;
- the oracle's model calls and requests per sentence (k samples of one query are one request where the endpoint
  takes ``n``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from statistics import fmean, mean
from typing import Any, ClassVar, NamedTuple

from pydantic import Field

from voirdire.kit import Report, ReportFold
from voirdire.kit.data import ModelCall, SessionRecord
from voirdire.kit.reports import (
    DEFAULT_SEED,
    Context,
    Interval,
    bootstrap_items,
    category,
    proportion,
    spearman as metrics_spearman,
)

from .entities import norm
from .linearity import LinearityOutcome

MEASURES = ("a_test", "a_rate", "con_o", "con_rs", "n_entities")
LABELS = {"a_test": "A_test", "a_rate": "A_rate", "con_o": "Con_o", "con_rs": "Con_rs", "n_entities": "#E"}


def spearman(a: list[float], b: list[float]) -> float | None:
    """Spearman's ρ; None when either side is constant or there are fewer than 3 pairs."""
    if len(a) < 3 or len(set(a)) < 2 or len(set(b)) < 2:
        return None
    return metrics_spearman(a, b)


class EntityReport(Report):
    decisions: dict[str, int] = Field(default_factory=dict)
    sentence_acceptance: float | None = None
    entity_acceptance: float | None = None
    means: dict[str, float] = Field(default_factory=dict)
    correlations: dict[str, float | None] = Field(
        default_factory=dict, description="'A_test~Con_o' -> Spearman rho (Table 1)"
    )
    labelled: dict[str, float | int] = Field(
        default_factory=dict,
        description="Fig. 6 against the items' labelled entities: labelled, extracted among them, tested entities "
        "also labelled and the acceptance of those",
    )
    oracle_calls_per_sentence: float | None = Field(None, description="replies drawn (samples) per session")
    oracle_requests_per_sentence: float | None = Field(None, description="HTTP requests (or generations)")
    rows: list[dict[str, Any]] = Field(default_factory=list)
    intervals: dict[str, Interval] = Field(
        default_factory=dict, description="acceptances, Table 1's means and Spearman's ρ with their intervals"
    )

    PERCENT_INTERVALS: ClassVar[frozenset[str]] = Report.PERCENT_INTERVALS | {"sentence acceptance",
                                                                              "entity acceptance"}  # fmt: skip

    def text(self) -> str:
        lines = self.summary_lines()
        lines.append("decisions: " + ", ".join(f"{k} {v}" for k, v in sorted(self.decisions.items())))
        if self.sentence_acceptance is not None:
            lines.append(f"per-sentence acceptance {100 * self.sentence_acceptance:.1f}%, per-entity acceptance "
                         f"{100 * (self.entity_acceptance or 0):.1f}% (Fig. 6)")  # fmt: skip
        if self.means:
            lines.append("means: " + ", ".join(f"{LABELS[k]} {v:.3f}" for k, v in self.means.items()))
        if self.correlations:
            shown = ", ".join(f"{k} {'n/a' if v is None else f'{v:.3f}'}" for k, v in self.correlations.items())
            lines.append("Spearman (Table 1): " + shown)
        if self.labelled:
            lb = self.labelled
            lines.append(f"labelled entities {lb['labelled']}, extracted {lb['extracted']}; tested and labelled "
                         f"{lb['tested_labelled']}, accepted {lb['tested_labelled_accepted']} (Fig. 6)")  # fmt: skip
        if self.oracle_requests_per_sentence is not None:
            lines.append(f"oracle per sentence: {self.oracle_calls_per_sentence:.1f} replies in "
                         f"{self.oracle_requests_per_sentence:.1f} requests")  # fmt: skip
        return "\n".join([*lines, *self.interval_lines(), *self.usage_lines()])


class Sentence(NamedTuple):
    """What the report keeps of one session: the oracle's replies and requests, the decision, the row of a
    decided sentence, and its counts against the labelled entities (None when the item has none)."""

    calls: int
    requests: int
    decision: str | None
    row: dict[str, Any] | None
    labelled: tuple[int, int, int, int] | None  # labelled, extracted, tested_labelled, tested_labelled_accepted


def sentence(s: SessionRecord) -> Sentence:
    """The report's fold over one session."""
    mc = [e for e in s.events if isinstance(e, ModelCall) and e.role == "oracle"]
    calls, requests = sum(e.samples for e in mc), sum(e.requests for e in mc)
    v = s.verdict
    if v is None:
        return Sentence(calls, requests, None, None, None)
    o = LinearityOutcome.model_validate(v.statistics)  # the fields LinearityChecker.Outcome declares
    row = None
    if v.decision in ("accepted", "rejected"):
        measures = dict(zip(MEASURES, (o.a_test, o.a_rate, o.con_o, o.con_rs, o.n_entities), strict=True))
        row = {"id": s.item_id, "accepted": v.accepted, **measures, "tested": o.tested}
    gold = {norm(g) for g in s.item.get("gold") or []}
    labelled = None
    if gold:
        extracted = {norm(e["text"]) for e in o.entities}
        tested = {norm(e) for e in o.tested} & gold
        labelled = (len(gold), len(gold & extracted), len(tested), len(tested) if v.accepted else 0)
    return Sentence(calls, requests, category(v.decision), row, labelled)


def _finish(values: Sequence[Sentence], ctx: Context) -> EntityReport:
    decisions: Counter[str] = Counter(v.decision for v in values if v.decision is not None)
    rows = [v.row for v in values if v.row is not None]
    lab: Counter[str] = Counter()
    for v in values:
        if v.labelled is not None:
            for key, n in zip(LABELLED, v.labelled, strict=True):
                lab[key] += n
    out = EntityReport(
        protocol=ctx.header.protocol if ctx.header else "oracle_entities",
        transcript=ctx.path,
        decisions=dict(decisions),
        rows=rows,
        **ctx.counts,
    )
    if lab:
        out.labelled = dict(lab)
    if rows:
        out.sentence_acceptance = sum(r["accepted"] for r in rows) / len(rows)
        total = sum(r["n_entities"] for r in rows)
        out.entity_acceptance = sum(r["n_entities"] for r in rows if r["accepted"]) / total if total else None
        out.means = {k: mean(float(r[k]) for r in rows) for k in MEASURES}
        for a in ("a_test", "a_rate", "n_entities"):
            for b in ("con_o", "con_rs", "n_entities"):
                if a != b:
                    out.correlations[f"{LABELS[a]}~{LABELS[b]}"] = spearman(
                        [float(r[a]) for r in rows], [float(r[b]) for r in rows]
                    )
    if rows and ctx.ci:
        out.intervals = _intervals(rows, ctx.ci)
        out.ci, out.ci_seed = ctx.ci, DEFAULT_SEED
    if values:
        out.oracle_calls_per_sentence = mean([v.calls for v in values])
        out.oracle_requests_per_sentence = mean([v.requests for v in values])
    return out


def _intervals(rows: list[dict[str, Any]], level: float) -> dict[str, Interval]:
    """The acceptances (per sentence: Wilson; per entity, a ratio: bootstrap), each mean of Table 1 and each
    Spearman ρ (BCa bootstrap); an item's sessions are resampled together."""
    by_item: dict[Any, list[dict[str, Any]]] = {}
    for r in rows:
        by_item.setdefault(r["id"], []).append(r)
    groups = list(by_item.values())
    boot: dict[str, Any] = {"level": level, "seed": DEFAULT_SEED}

    def entity_acceptance(rs: list[dict[str, Any]]) -> float:
        total = sum(r["n_entities"] for r in rs)
        return sum(r["n_entities"] for r in rs if r["accepted"]) / total if total else math.nan

    def mean_of(k: str) -> Callable[[list[dict[str, Any]]], float]:
        return lambda rs: fmean(float(r[k]) for r in rs)

    def rho(a: str, b: str) -> Callable[[list[dict[str, Any]]], float]:
        def statistic(rs: list[dict[str, Any]]) -> float:
            value = spearman([float(r[a]) for r in rs], [float(r[b]) for r in rs])
            return math.nan if value is None else value

        return statistic

    accepted = [[bool(r["accepted"]) for r in g] for g in groups]
    out = {
        "sentence acceptance": proportion("sentence acceptance", accepted, **boot),
        "entity acceptance": bootstrap_items("entity acceptance", groups, entity_acceptance, **boot),
    }
    for k in MEASURES:
        out[f"mean {LABELS[k]}"] = bootstrap_items("mean", groups, mean_of(k), **boot)
    for a in ("a_test", "a_rate", "n_entities"):
        for b in ("con_o", "con_rs", "n_entities"):
            if a != b:
                name = f"{LABELS[a]}~{LABELS[b]}"
                out[f"Spearman {name}"] = bootstrap_items("Spearman ρ", groups, rho(a, b), **boot)
    return out


LABELLED = ("labelled", "extracted", "tested_labelled", "tested_labelled_accepted")

report: ReportFold[Sentence, EntityReport] = ReportFold(session=sentence, finish=_finish)
"""The report of a linearity-checker transcript: ``report(transcript)``, or folded."""
