"""Metrics shared by the protocols: P/R/F1, accuracy, AUROC, rank correlations, Cohen's kappa.

Written without scikit-learn so the core stays light; tests compare them against scikit-learn.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

from pydantic import BaseModel


class PRF(BaseModel):
    precision: float
    recall: float
    f1: float
    support: int  # gold positives
    predicted: int  # predicted positives
    tp: int

    def pct(self) -> dict[str, float]:
        return {"P": 100 * self.precision, "R": 100 * self.recall, "F1": 100 * self.f1}


def precision_recall_f1(gold: Sequence[bool], predicted: Sequence[bool]) -> PRF:
    """Binary P/R/F1 with the positive class ``True``; an empty denominator gives 0 (sklearn's zero_division=0)."""
    _same_length(gold, predicted)
    tp = sum(1 for g, p in zip(gold, predicted, strict=True) if g and p)
    n_pred = sum(1 for p in predicted if p)
    n_gold = sum(1 for g in gold if g)
    precision = tp / n_pred if n_pred else 0.0
    recall = tp / n_gold if n_gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return PRF(precision=precision, recall=recall, f1=f1, support=n_gold, predicted=n_pred, tp=tp)


def accuracy(gold: Sequence[Hashable], predicted: Sequence[Hashable]) -> float:
    _same_length(gold, predicted)
    return sum(1 for g, p in zip(gold, predicted, strict=True) if g == p) / len(gold) if gold else 0.0


def auroc(labels: Sequence[bool], scores: Sequence[float]) -> float:
    """Area under the ROC curve as the Mann–Whitney probability P(score_pos > score_neg), ties counting 1/2."""
    _same_length(labels, scores)
    ranks = _average_ranks(scores)
    n_pos = sum(1 for y in labels if y)
    n_neg = len(labels) - n_pos
    if n_pos == 0 or n_neg == 0:
        return math.nan
    rank_sum = sum(r for r, y in zip(ranks, labels, strict=True) if y)
    return (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def pearson(x: Sequence[float], y: Sequence[float]) -> float:
    _same_length(x, y)
    n = len(x)
    if n < 2:
        return math.nan
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy) if sxx and syy else math.nan


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    return pearson(_average_ranks(x), _average_ranks(y))


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float:
    _same_length(x, y)
    conc = disc = tx = ty = 0
    n = len(x)
    for i in range(n):
        for j in range(i + 1, n):
            dx, dy = x[i] - x[j], y[i] - y[j]
            if dx == 0 and dy == 0:
                continue
            if dx == 0:
                tx += 1
            elif dy == 0:
                ty += 1
            elif (dx > 0) == (dy > 0):
                conc += 1
            else:
                disc += 1
    denom = math.sqrt((conc + disc + tx) * (conc + disc + ty))
    return (conc - disc) / denom if denom else math.nan


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Cohen's kappa between two raters' labels over the same items."""
    _same_length(a, b)
    n = len(a)
    if n == 0:
        return math.nan
    observed = sum(1 for x, y in zip(a, b, strict=True) if x == y) / n
    cats = set(a) | set(b)
    expected = sum((list(a).count(c) / n) * (list(b).count(c) / n) for c in cats)
    return 1.0 if expected == 1 else (observed - expected) / (1 - expected)


def mean_sd(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (ddof=1; 0 for a single value)."""
    n = len(values)
    if n == 0:
        return math.nan, math.nan
    m = sum(values) / n
    sd = math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    return m, sd


def _average_ranks(values: Sequence[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def _same_length(a: Sequence[object], b: Sequence[object]) -> None:
    if len(a) != len(b):
        raise ValueError(f"length mismatch: {len(a)} vs {len(b)}")
