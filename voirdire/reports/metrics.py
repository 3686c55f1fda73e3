"""Metrics shared by the protocols: P/R/F1, accuracy, AUROC, rank correlations, Cohen's kappa, mean ± sd.

The statistics come from scikit-learn and scipy; what is kept here is the contract the protocols' reports rely
on: plain Python floats, ``nan`` where a statistic is undefined (one class only, a constant input, fewer than two
values) instead of a warning or an exception, and one length check with one message.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Hashable, Sequence
from decimal import ROUND_CEILING, Decimal

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
    """Binary P/R/F1 with the positive class ``True``; an empty denominator gives 0 (``zero_division=0``)."""
    from sklearn.metrics import precision_recall_fscore_support

    _same_length(gold, predicted)
    tp = sum(1 for g, p in zip(gold, predicted, strict=True) if g and p)
    n_pred = sum(1 for p in predicted if p)
    n_gold = sum(1 for g in gold if g)
    if not gold:
        return PRF(precision=0.0, recall=0.0, f1=0.0, support=0, predicted=0, tp=0)
    p, r, f, _ = precision_recall_fscore_support(
        [bool(g) for g in gold], [bool(p) for p in predicted], average="binary", pos_label=True, zero_division=0
    )
    return PRF(precision=float(p), recall=float(r), f1=float(f), support=n_gold, predicted=n_pred, tp=tp)


def f1_of_pairs(pairs: Sequence[tuple[bool, bool]]) -> float:
    """F1 of (gold positive, predicted positive) pairs from the counts, 2tp / (2tp + fp + fn), 0 without positives
    (``precision_recall_f1``'s ``zero_division=0``): what a bootstrap evaluates thousands of times, where a
    scikit-learn call each would take seconds."""
    tp = sum(1 for g, p in pairs if g and p)
    wrong = sum(1 for g, p in pairs if g != p)
    return 2 * tp / (2 * tp + wrong) if tp or wrong else 0.0


def accuracy(gold: Sequence[Hashable], predicted: Sequence[Hashable]) -> float:
    """The share of equal labels; 0 for no items."""
    _same_length(gold, predicted)
    return sum(1 for g, p in zip(gold, predicted, strict=True) if g == p) / len(gold) if gold else 0.0


def auroc(labels: Sequence[bool], scores: Sequence[float]) -> float:
    """Area under the ROC curve (ties count 1/2); ``nan`` when only one class is present."""
    from sklearn.metrics import roc_auc_score

    _same_length(labels, scores)
    if len({bool(y) for y in labels}) < 2:
        return math.nan
    return float(roc_auc_score([bool(y) for y in labels], list(scores)))


def pearson(x: Sequence[float], y: Sequence[float]) -> float:
    """Pearson's r; ``nan`` for fewer than two values or a constant input."""
    from scipy.stats import pearsonr

    return _correlation(pearsonr, x, y)


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's ρ (Pearson's r on average ranks)."""
    from scipy.stats import spearmanr

    return _correlation(spearmanr, x, y)


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's τ-b (ties adjusted)."""
    from scipy.stats import kendalltau

    return _correlation(lambda a, b: kendalltau(a, b, variant="b"), x, y)


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Cohen's kappa between two raters' labels over the same items; 1 when both give one and the same label
    throughout (scikit-learn's 0/0), ``nan`` for no items."""
    from sklearn.metrics import cohen_kappa_score

    _same_length(a, b)
    if not a:
        return math.nan
    if len(set(a) | set(b)) == 1:
        return 1.0
    # Labels as codes: scikit-learn sorts the labels, which labels of mixed types (True and "yes") cannot do.
    codes: dict[Hashable, int] = {}
    first, second = [codes.setdefault(v, len(codes)) for v in a], [codes.setdefault(v, len(codes)) for v in b]
    return float(cohen_kappa_score(first, second))


def round_up(x: float, significant: int = 3) -> float:
    """The least number of ``significant`` significant digits that is at least ``x``: how an upper bound is
    printed ("≤ 41%" for 40.94%, never "≤ 40.9%"). Exact for decimals as written (12.5 stays 12.5)."""
    if x <= 0 or not math.isfinite(x):
        return x
    d = Decimal(repr(x))
    step = Decimal(1).scaleb(d.adjusted() - significant + 1)
    return float(d.quantize(step, rounding=ROUND_CEILING))


def mean_sd(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (ddof=1; 0 for a single value)."""
    import statistics

    if not values:
        return math.nan, math.nan
    return statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0


def _correlation(stat: Callable[..., object], x: Sequence[float], y: Sequence[float]) -> float:
    _same_length(x, y)
    if len(x) < 2 or len(set(x)) < 2 or len(set(y)) < 2:
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns where it answers nan; nan is the answer here too
        value = float(stat(list(x), list(y))[0])  # type: ignore[index]
    return value


def _same_length(a: Sequence[object], b: Sequence[object]) -> None:
    if len(a) != len(b):
        raise ValueError(f"length mismatch: {len(a)} vs {len(b)}")
