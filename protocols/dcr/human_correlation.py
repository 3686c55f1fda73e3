"""How §4.3 compares a metric with human judgment (scipy's correlations through the reports' metrics, scikit-learn's
AUROC).

- Summary level (SummEval, Table 3, "following UniEval"): for each document, Spearman ρ and Kendall τ between the
  metric and the human scores of its system summaries, averaged over documents. A document whose human scores do
  not vary is skipped (96 of SummEval's 100 remain for consistency); one whose metric does not vary has no
  correlation and is skipped too, and counted.
- Sample level (QAGS, Table 4): Pearson r, Spearman ρ, Kendall τ over all summaries.
- Binary (PAWS, QQP, MSRP, Table 2): AUROC of the metric for the paraphrase label.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel

from voirdire.kit.reports import kendall_tau_b, pearson, spearman

Kind = Literal["summary", "sample", "binary"]


class Correlation(BaseModel):
    """The statistics of one metric on one benchmark; ``n`` items, ``documents`` for summary level."""

    kind: Kind
    n: int
    pearson: float | None = None
    spearman: float | None = None
    kendall: float | None = None
    auroc: float | None = None
    documents: int | None = None
    skipped_constant_human: int | None = None
    skipped_constant_metric: int | None = None

    def text(self) -> str:
        parts = [f"{name} {value:.4f}" for name, value in self.values().items()]
        extra = f"n={self.n}"
        if self.kind == "summary":
            extra += (
                f", {self.documents} documents (skipped: {self.skipped_constant_human} constant human, "
                f"{self.skipped_constant_metric} constant metric)"
            )
        return (", ".join(parts) or "undefined (no variation to correlate)") + f"  ({extra})"

    def values(self) -> dict[str, float]:
        names = ("pearson", "spearman", "kendall", "auroc")
        return {n: v for n in names if (v := getattr(self, n)) is not None}


def _f(x: float) -> float | None:
    return None if x is None or math.isnan(x) else float(x)


def summary_level(doc_ids: Sequence[str], metric: Sequence[float], human: Sequence[float]) -> Correlation:
    groups: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for d, m, h in zip(doc_ids, metric, human, strict=True):
        groups[d].append((m, h))
    rhos, taus = [], []
    constant_human = constant_metric = 0
    for pairs in groups.values():
        ms, hs = [p[0] for p in pairs], [p[1] for p in pairs]
        if len(set(hs)) < 2:
            constant_human += 1
            continue
        if len(set(ms)) < 2:
            constant_metric += 1
            continue
        rhos.append(spearman(ms, hs))
        taus.append(kendall_tau_b(ms, hs))
    return Correlation(
        kind="summary",
        n=len(metric),
        spearman=_f(statistics.fmean(rhos)) if rhos else None,
        kendall=_f(statistics.fmean(taus)) if taus else None,
        documents=len(rhos),
        skipped_constant_human=constant_human,
        skipped_constant_metric=constant_metric,
    )


def sample_level(metric: Sequence[float], human: Sequence[float]) -> Correlation:
    if len(metric) < 2 or len(set(metric)) < 2 or len(set(human)) < 2:
        return Correlation(kind="sample", n=len(metric))
    return Correlation(
        kind="sample",
        n=len(metric),
        pearson=_f(pearson(metric, human)),
        spearman=_f(spearman(metric, human)),
        kendall=_f(kendall_tau_b(metric, human)),
    )


def binary(metric: Sequence[float], labels: Sequence[float]) -> Correlation:
    from sklearn.metrics import roc_auc_score

    if len(set(labels)) < 2:
        return Correlation(kind="binary", n=len(metric))
    return Correlation(kind="binary", n=len(metric), auroc=float(roc_auc_score([int(x) for x in labels], metric)))


def correlate(
    kind: Kind, metric: Sequence[float], human: Sequence[float], doc_ids: Sequence[str] | None = None
) -> Correlation:
    if kind == "summary":
        if doc_ids is None:
            raise ValueError("summary-level correlation needs the document of every summary")
        return summary_level(doc_ids, metric, human)
    return sample_level(metric, human) if kind == "sample" else binary(metric, human)
