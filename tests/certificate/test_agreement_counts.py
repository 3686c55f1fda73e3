"""κ and α from a confusion matrix's counts (what every bootstrap resample computes at once) equal scikit-learn's κ
and the krippendorff package's α on the same sessions, and the vectorized bootstrap gives the interval that
resampling item by item gives."""

from __future__ import annotations

import math
import random

import pytest

from voirdire.certificate import bootstrap_items, krippendorff_alpha
from voirdire.certificate.agreement import (
    agreement_of_counts,
    alpha_of_counts,
    cohen_kappa,
    kappa_of_counts,
    pair_counts,
    proportion,
)
from voirdire.certificate.intervals import bootstrap_counts


def same(x: float, y: float) -> bool:
    return (math.isnan(x) and math.isnan(y)) or x == pytest.approx(y, abs=1e-9)


def test_closed_forms_equal_the_libraries() -> None:
    rng = random.Random(1)
    for _ in range(300):
        n = rng.randint(1, 40)
        p, q = rng.random(), rng.random()
        pairs = [(rng.random() < p, rng.random() < q) for _ in range(n)]
        counts = pair_counts(pairs)
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
    fast = bootstrap_counts("κ", [pair_counts(g) for g in groups], kappa_of_counts, resamples=300, seed=3)
    assert slow.low is not None and fast.low is not None
    assert fast.estimate == pytest.approx(slow.estimate)
    assert (fast.low, fast.high) == (pytest.approx(slow.low), pytest.approx(slow.high))
    assert fast.method == slow.method == "bootstrap BCa over items"
    one = bootstrap_counts("κ", [(1, 0, 0, 0)] * 5, kappa_of_counts)
    assert one.low is None and "undefined" in (one.reason or "")


@pytest.mark.parametrize("most", [1, 3])  # one session an item (Wilson), or repeats (the bootstrap over items)
def test_the_rates_from_counts_are_the_rates_of_the_pairs(most: int) -> None:
    """``agreement_of_counts`` holds four numbers an item; its accuracy, TPR and TNR are ``proportion`` of the
    sessions' own observations, interval and all."""
    rng = random.Random(11 + most)
    for _ in range(6):
        groups = [[(rng.random() < 0.6, rng.random() < 0.5) for _ in range(rng.randint(1, most))]
                  for _ in range(rng.randint(2, 60))]  # fmt: skip
        a = agreement_of_counts([pair_counts(g) for g in groups], resamples=300)
        accepted = [g for g in ([v for v, h in pairs if h] for pairs in groups) if g]
        rejected = [g for g in ([not v for v, h in pairs if not h] for pairs in groups) if g]
        assert a.accuracy == proportion("accuracy", [[v == h for v, h in g] for g in groups], resamples=300)
        if accepted:
            assert a.tpr == proportion("TPR", accepted, resamples=300)
        else:
            assert a.tpr.low is None and a.tpr.reason == "no item that people accept"
        if rejected:
            assert a.tnr == proportion("TNR", rejected, resamples=300)
        assert a.sessions == sum(map(len, groups)) and a.items == len(groups)
        flat = [p for g in groups for p in g]
        assert (a.confusion.tp, a.confusion.fp, a.confusion.fn, a.confusion.tn) == pair_counts(flat)
        assert "Wilson" in a.accuracy.method if most == 1 else "bootstrap" in a.accuracy.method
