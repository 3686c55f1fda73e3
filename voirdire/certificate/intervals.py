"""Intervals on a run's numbers: Wilson intervals for proportions and bootstrap intervals that resample items.

Every interval is an ``Interval``: the estimate, the bounds, the level, the method, how many items it rests on and
the seed of its resampling, so that a reader can recompute it. An interval that cannot be computed (no items, one
item, a statistic undefined on the data or on its resamples) has no bounds and says why in ``reason``; no bound is
ever ``nan``.

Bootstrap intervals come from ``scipy.stats.bootstrap`` (BCa by default, percentile on request). What is resampled
is the item, not the session: a run with several sessions of one item (repeats) has correlated sessions, and
resampling them one by one would make the interval too narrow. The statistic is therefore computed on the sessions
of a resample of items (``groups``: one sequence of observations per item).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Literal, TypeVar

from pydantic import BaseModel

T = TypeVar("T")

DEFAULT_LEVEL = 0.95
DEFAULT_SEED = 20231  # recorded in every bootstrap interval, so that it can be recomputed
DEFAULT_RESAMPLES = 2000
# BCa's acceleration comes from a jackknife: n more evaluations of the statistic on n - 1 items each, O(n²) in all.
# Beyond this many items the percentile interval is used instead (BCa's correction shrinks as n grows).
BCA_MAX_ITEMS = 1000

BootstrapMethod = Literal["BCa", "percentile"]
OFF = "intervals off (--ci 0)"  # the reason of every interval at level 0: the estimate alone, nothing resampled


class Interval(BaseModel):
    """One number with its interval; ``low``/``high`` are None exactly when ``reason`` says why."""

    name: str
    estimate: float | None
    low: float | None = None
    high: float | None = None
    level: float = DEFAULT_LEVEL
    method: str
    n: int
    seed: int | None = None
    resamples: int | None = None
    reason: str | None = None

    @property
    def width(self) -> float | None:
        return None if self.low is None or self.high is None else self.high - self.low

    def covers(self, value: float) -> bool:
        return self.low is not None and self.high is not None and self.low <= value <= self.high

    def text(self, *, percent: bool = False, digits: int = 3) -> str:
        """``0.812 [0.771, 0.848] (95% Wilson, n=400)``, or the estimate and why there is no interval."""

        def num(x: float) -> str:
            return f"{100 * x:.1f}%" if percent else f"{x:.{digits}f}"

        if self.estimate is None:
            return f"undefined ({self.reason})"
        value = num(self.estimate)
        if self.reason == OFF:
            return value
        if self.low is None or self.high is None:
            return f"{value} (no interval: {self.reason})"
        seed = f", seed {self.seed}" if self.seed is not None else ""
        how = f"{100 * self.level:g}% {self.method}, n={self.n}{seed}"
        return f"{value} [{num(self.low)}, {num(self.high)}] ({how})"


def no_interval(name: str, estimate: float | None, *, n: int, method: str, reason: str, level: float) -> Interval:
    """An interval that cannot be computed, and why."""
    return Interval(name=name, estimate=estimate, level=level, method=method, n=n, reason=reason)


def wilson(name: str, successes: int, n: int, *, level: float = DEFAULT_LEVEL) -> Interval:
    """The Wilson score interval of a proportion: scipy's (``binomtest(k, n).proportion_ci``, method ``wilson``),
    the interval statsmodels' ``proportion_confint(method="wilson")`` gives to within 5e-16, from the library the
    bootstrap intervals already import (statsmodels would add it and pandas, about a second of CPU, to every
    report)."""
    _check_level(level)
    if n < 1:
        return no_interval(name, None, n=n, method="Wilson", reason="no items", level=level)
    if level == 0:
        return no_interval(name, successes / n, n=n, method="Wilson", reason=OFF, level=level)
    from scipy.stats import binomtest  # imported where an interval is computed

    ci = binomtest(int(successes), int(n)).proportion_ci(confidence_level=level, method="wilson")
    return Interval(
        name=name, estimate=successes / n, low=float(ci.low), high=float(ci.high), level=level, method="Wilson", n=n
    )


def bootstrap_items(
    name: str,
    groups: Sequence[Sequence[T]],
    statistic: Callable[[list[T]], float],
    *,
    level: float = DEFAULT_LEVEL,
    method: BootstrapMethod = "BCa",
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> Interval:
    """A bootstrap interval of ``statistic`` over the observations of resampled items.

    ``groups`` holds one sequence of observations per item (its sessions); a resample draws items with
    replacement and hands ``statistic`` the concatenation of their observations. BCa becomes the percentile
    interval beyond ``BCA_MAX_ITEMS`` items, and the interval's ``method`` says which was computed. ``statistic``
    returns ``nan`` where it is undefined (one class, a constant input); the interval then says so instead.
    """
    import numpy as np

    _check_level(level)
    n = len(groups)
    if method == "BCa" and n > BCA_MAX_ITEMS:
        method = "percentile"
    label = f"bootstrap {method} over items"
    flat = [x for g in groups for x in g]
    estimate = _finite(statistic(flat)) if flat else None
    if estimate is None:
        why = "no items" if not flat else "the statistic is undefined on these data (one class or a constant input)"
        return no_interval(name, None, n=n, method=label, reason=why, level=level)
    if level == 0:
        return no_interval(name, estimate, n=n, method=label, reason=OFF, level=level)
    if n < 2:
        return no_interval(name, estimate, n=n, method=label, reason="fewer than 2 items to resample", level=level)
    from scipy.stats import bootstrap  # imported where an interval is computed (about a second of CPU)

    def on_items(indices: np.ndarray) -> float:
        return statistic([x for i in indices for x in groups[int(i)]])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns where it answers nan; the reason below says why instead
        # resamples drawn in batches of 2,000,000 indices: the same draws, without a resamples x items array at
        # once
        res = bootstrap(
            (np.arange(n),), on_items, vectorized=False, n_resamples=resamples, confidence_level=level,
            method=method, rng=np.random.default_rng(seed), batch=max(1, 2_000_000 // n),
        )  # fmt: skip
    common = dict(name=name, estimate=estimate, level=level, method=label, n=n, seed=seed, resamples=resamples)
    return _from_result(res, common, method)


def bootstrap_counts(
    name: str,
    counts: Sequence[Sequence[int]],
    statistic: Callable[[object], object],
    *,
    level: float = DEFAULT_LEVEL,
    method: BootstrapMethod = "BCa",
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> Interval:
    """``bootstrap_items`` for a statistic of summed counts (a confusion matrix): ``counts`` holds one row of counts
    per item (its sessions'), a resample of items sums their rows, and ``statistic`` maps an array of summed rows
    (shape ``(..., k)``) to the statistic of each (``nan`` where undefined). Every resample is computed at once,
    which is what makes κ and α over thousands of items take a fraction of a second instead of a minute; the
    intervals are those ``bootstrap_items`` gives for the same resamples (tests/certificate/test_statistics.py)."""
    import numpy as np

    _check_level(level)
    rows = np.asarray(counts, dtype=float).reshape(len(counts), -1)
    n = len(rows)
    if method == "BCa" and n > BCA_MAX_ITEMS:
        method = "percentile"
    label = f"bootstrap {method} over items"
    estimate = _finite(float(np.asarray(statistic(rows.sum(axis=0))))) if n else None
    if estimate is None:
        why = "no items" if not n else "the statistic is undefined on these data (one class or a constant input)"
        return no_interval(name, None, n=n, method=label, reason=why, level=level)
    if level == 0:
        return no_interval(name, estimate, n=n, method=label, reason=OFF, level=level)
    if n < 2:
        return no_interval(name, estimate, n=n, method=label, reason="fewer than 2 items to resample", level=level)
    common = dict(name=name, estimate=estimate, level=level, method=label, n=n, seed=seed, resamples=resamples)
    if (rows == rows[0]).all():  # every resample sums n copies of the one row: the statistic of each is the estimate
        return Interval(**common, reason=f"every resample gives {estimate:.3g} (no variation to resample)")  # type: ignore[arg-type]
    from scipy.stats import bootstrap  # imported where an interval is computed (about a second of CPU)

    columns = np.ascontiguousarray(rows.T)  # summed column by column: a gather of (..., n) each, not (..., n, k)

    def on_items(indices: np.ndarray, axis: int = -1) -> np.ndarray:
        taken = np.asarray(indices, dtype=int)
        summed = np.stack([column[taken].sum(axis=-1) for column in columns], axis=-1)
        return np.asarray(statistic(summed), dtype=float)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns where it answers nan; the reason below says why instead
        # resamples drawn in batches of 500,000 counts (4 MB a gathered column): the same draws as one batch
        res = bootstrap(
            (np.arange(n),), on_items, vectorized=True, n_resamples=resamples, confidence_level=level,
            method=method, rng=np.random.default_rng(seed), batch=max(1, 500_000 // (n * rows.shape[1])),
        )  # fmt: skip
    return _from_result(res, common, method)


def bootstrap_means(
    name: str,
    groups: Sequence[Sequence[float]],
    *,
    level: float = DEFAULT_LEVEL,
    method: BootstrapMethod = "BCa",
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> Interval:
    """``bootstrap_items`` for the mean of the observations of resampled items (``nan`` where a resample has
    none), every resample at once: a resample's mean is its items' summed sums over their summed counts
    (``bootstrap_counts``), so a report's means over thousands of items take a tenth of a second, not seconds of
    Python per resample. The intervals are those ``bootstrap_items`` gives with a mean statistic, the same
    resamples; exactly so for whole-number observations (counts), whose sums are exact."""
    sums, counts = [math.fsum(g) for g in groups], [len(g) for g in groups]
    return bootstrap_sums(name, sums, counts, level=level, method=method, seed=seed, resamples=resamples)


def bootstrap_sums(
    name: str,
    sums: Sequence[float],
    counts: Sequence[int],
    *,
    level: float = DEFAULT_LEVEL,
    method: BootstrapMethod = "BCa",
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> Interval:
    """``bootstrap_means`` given each item's sum and count of observations (arrays, say) rather than the
    observations: a report over 100,000 items passes two arrays, not a list per item, so memory stays flat with
    the run's size. The same interval as ``bootstrap_means`` on observations with these sums and counts."""
    import numpy as np

    summed = np.asarray(sums, dtype=float)
    counted = np.asarray(counts, dtype=float)
    if not counted.any():  # no observation at all: as bootstrap_items says it
        _check_level(level)
        label = f"bootstrap {'percentile' if len(counted) > BCA_MAX_ITEMS else method} over items"
        return no_interval(name, None, n=len(counted), method=label, reason="no items", level=level)
    rows = np.column_stack([summed, counted])
    return bootstrap_counts(name, rows, _mean_of_sums, level=level, method=method, seed=seed, resamples=resamples)


def bootstrap_f1(
    name: str,
    groups: Sequence[Sequence[tuple[bool, bool]]],
    *,
    level: float = DEFAULT_LEVEL,
    method: BootstrapMethod = "BCa",
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> Interval:
    """``bootstrap_items`` of F1 (``f1_of_pairs``: 2tp / (2tp + fp + fn), 0 without positives) over items of
    (gold positive, predicted positive) pairs, every resample at once: F1 depends on the pairs only through the
    true positives and the wrong pairs, so each item is its two counts and a resample sums them
    (``bootstrap_counts``). The same resamples and the same whole-number sums, hence the interval
    ``bootstrap_items`` gives with ``f1_of_pairs``, where a 10,000-session report spent seconds in Python."""
    if not any(groups):  # no pair at all: bootstrap_items says why (the counts would read as an F1 of 0)
        from voirdire.reports import f1_of_pairs

        return bootstrap_items(name, groups, f1_of_pairs, level=level, method=method, seed=seed, resamples=resamples)
    counts = [(sum(1 for g, p in pairs if g and p), sum(1 for g, p in pairs if g != p)) for pairs in groups]
    return bootstrap_counts(name, counts, _f1_of_counts, level=level, method=method, seed=seed, resamples=resamples)


def _f1_of_counts(rows: object) -> object:
    """Summed (true positives, wrong pairs) rows, shape ``(..., 2)``, to F1; 0 where both are 0 (``f1_of_pairs``)."""
    import numpy as np

    summed = np.asarray(rows, dtype=float)
    doubled = 2 * summed[..., 0]
    denominator = doubled + summed[..., 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, doubled / denominator, 0.0)


def _mean_of_sums(rows: object) -> object:
    """Summed (sum, count) rows, shape ``(..., 2)``, to their means; ``nan`` where the count is 0."""
    import numpy as np

    summed = np.asarray(rows, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return summed[..., 0] / summed[..., 1]


def _from_result(res: object, common: dict[str, object], method: str) -> Interval:
    """The interval of a scipy bootstrap result, or why there is none (undefined or constant resamples)."""
    import numpy as np

    distribution = np.asarray(res.bootstrap_distribution, dtype=float)  # type: ignore[attr-defined]
    resamples = len(distribution)
    undefined = int(np.count_nonzero(~np.isfinite(distribution)))
    if undefined:
        return Interval(
            **common,  # type: ignore[arg-type]
            reason=f"the statistic is undefined on {undefined} of {resamples} resamples (one class in them)",
        )
    if float(np.ptp(distribution)) == 0.0:
        return Interval(**common, reason=f"every resample gives {common['estimate']:.3g} (no variation to resample)")  # type: ignore[arg-type]
    ci = res.confidence_interval  # type: ignore[attr-defined]
    low, high = float(ci.low), float(ci.high)
    if not (math.isfinite(low) and math.isfinite(high)):
        return Interval(**common, reason=f"the {method} interval is undefined on this bootstrap distribution")  # type: ignore[arg-type]
    return Interval(**common, low=low, high=high)  # type: ignore[arg-type]


def _finite(x: float) -> float | None:
    return float(x) if x is not None and math.isfinite(x) else None


def _check_level(level: float) -> None:
    """A level strictly between 0 and 1, or 0: intervals off (the estimate alone, with ``OFF`` as its reason)."""
    if not (level == 0 or 0 < level < 1):
        raise ValueError(f"confidence level must be between 0 and 1 (exclusive), or 0 for none; got {level}")
