"""``bootstrap_means``: the mean of resampled items' observations, every resample at once, is the interval
``bootstrap_items`` gives with a mean statistic (same seed, same resamples)."""

from __future__ import annotations

import math
import random
from statistics import fmean

import pytest

from voirdire.certificate.intervals import BCA_MAX_ITEMS, bootstrap_items, bootstrap_means


def _mean(xs: list[float]) -> float:
    return fmean(xs) if xs else math.nan


def _groups(n: int, seed: int, *, empty: float = 0.0) -> list[list[float]]:
    rng = random.Random(seed)
    groups = []
    for _ in range(n):
        g = [float(rng.choice((0, 1, 2, 5))) for _ in range(rng.choice((1, 1, 3)))]
        groups.append([] if rng.random() < empty else g)
    return groups


@pytest.mark.parametrize(
    ("n", "empty", "method"),
    [(40, 0.0, "BCa"), (300, 0.2, "BCa"), (BCA_MAX_ITEMS + 50, 0.0, "percentile"), (60, 0.0, "percentile")],
)
def test_the_same_interval_as_item_by_item(n: int, empty: float, method: str) -> None:
    groups = _groups(n, seed=n, empty=empty)
    slow = bootstrap_items("mean", groups, _mean, resamples=400, seed=7, method=method)  # type: ignore[arg-type]
    fast = bootstrap_means("mean", groups, resamples=400, seed=7, method=method)  # type: ignore[arg-type]
    assert fast == slow
    assert fast.low is not None and fast.high is not None and fast.low < fast.estimate < fast.high


def test_constant_and_undefined_resamples_say_why() -> None:
    constant = bootstrap_means("mean", [[2.0]] * 30)
    assert constant == bootstrap_items("mean", [[2.0]] * 30, _mean)
    assert constant.low is None and constant.reason and "no variation" in constant.reason
    mostly_empty = [[]] * 29 + [[1.0]]
    undefined = bootstrap_means("mean", mostly_empty, resamples=200)
    assert undefined == bootstrap_items("mean", mostly_empty, _mean, resamples=200)
    assert undefined.low is None and undefined.reason and "undefined" in undefined.reason
    assert bootstrap_means("mean", []).reason == "no items"
    assert bootstrap_means("mean", [[], []]) == bootstrap_items("mean", [[], []], _mean)


@pytest.mark.parametrize("observations", [[2, 2], [3, 0, 1], [1]])  # whole numbers: the same sums both ways
def test_items_all_alike_are_not_resampled_and_say_what_resampling_them_says(
    observations: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every item with the same observations: each resample is n copies of one item, so its mean is the estimate;
    the interval says so without drawing the resamples, as the resampled one does."""
    import scipy.stats

    groups = [list(observations) for _ in range(300)]
    reference = bootstrap_items("x", groups, lambda xs: sum(xs) / len(xs))
    drawn: list[object] = []
    monkeypatch.setattr(scipy.stats, "bootstrap", lambda *a, **k: drawn.append(a))
    fast = bootstrap_means("x", groups)
    assert drawn == []  # not resampled
    assert fast == reference and fast.low is None and "every resample gives" in (fast.reason or "")
    groups[7] = [*observations, 5.0]  # one item unlike the others: resampled as before
    with pytest.raises(AttributeError):  # the stand-in above returns no result: it was called
        bootstrap_means("x", groups)
    assert len(drawn) == 1
