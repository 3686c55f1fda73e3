"""κ and α from a confusion matrix's counts (what every bootstrap resample computes at once) equal scikit-learn's κ
and the krippendorff package's α on the same sessions, and the vectorized bootstrap gives the interval that
resampling item by item gives."""

from __future__ import annotations

import math
import random

import pytest

from voirdire.certificate import bootstrap_items, krippendorff_alpha
from voirdire.certificate.agreement import _counts, alpha_of_counts, cohen_kappa, kappa_of_counts
from voirdire.certificate.intervals import bootstrap_counts


def same(x: float, y: float) -> bool:
    return (math.isnan(x) and math.isnan(y)) or x == pytest.approx(y, abs=1e-9)


def test_closed_forms_equal_the_libraries() -> None:
    rng = random.Random(1)
    for _ in range(300):
        n = rng.randint(1, 40)
        p, q = rng.random(), rng.random()
        pairs = [(rng.random() < p, rng.random() < q) for _ in range(n)]
        counts = _counts(pairs)
        verdicts, labels = [v for v, _ in pairs], [h for _, h in pairs]
        kappa = cohen_kappa(verdicts, labels) if len(set(pairs)) > 1 else math.nan
        alpha = krippendorff_alpha([[float(v) for v in verdicts], [float(h) for h in labels]])
        assert same(float(kappa_of_counts(counts)), kappa), pairs
        assert same(float(alpha_of_counts(counts)), alpha), pairs


def test_one_cell_has_no_kappa_and_one_value_no_alpha() -> None:
    assert math.isnan(float(kappa_of_counts((5, 0, 0, 0))))
    assert math.isnan(float(kappa_of_counts((0, 5, 0, 0))))
    assert math.isnan(float(alpha_of_counts((5, 0, 0, 0))))
    assert float(kappa_of_counts((3, 2, 0, 0))) == 0.0  # the verdict accepts everything: no agreement beyond chance


def test_vectorized_bootstrap_gives_the_item_by_item_interval() -> None:
    rng = random.Random(7)
    groups = [[(rng.random() < 0.6, rng.random() < 0.7) for _ in range(rng.randint(1, 3))] for _ in range(80)]

    def kappa(pairs: list[tuple[bool, bool]]) -> float:
        return cohen_kappa([v for v, _ in pairs], [h for _, h in pairs]) if len(set(pairs)) > 1 else math.nan

    slow = bootstrap_items("κ", groups, kappa, resamples=300, seed=3)
    fast = bootstrap_counts("κ", [_counts(g) for g in groups], kappa_of_counts, resamples=300, seed=3)
    assert slow.low is not None and fast.low is not None
    assert fast.estimate == pytest.approx(slow.estimate)
    assert (fast.low, fast.high) == (pytest.approx(slow.low), pytest.approx(slow.high))
    assert fast.method == slow.method == "bootstrap BCa over items"
    one = bootstrap_counts("κ", [(1, 0, 0, 0)] * 5, kappa_of_counts)
    assert one.low is None and "undefined" in (one.reason or "")
