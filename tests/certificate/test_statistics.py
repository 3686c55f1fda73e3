"""The certificate's statistics: intervals, agreement, paired tests, PPI, the sample draw."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from scipy.stats import binomtest, norm

from voirdire.certificate import (
    Interval,
    bootstrap_items,
    draw_sample,
    human_agreement,
    krippendorff_alpha,
    mcnemar_exact,
    paired_difference,
    ppi_mean,
    verdict_agreement,
    wilson,
)


def mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def no_nan(iv: Interval) -> None:
    for x in (iv.estimate, iv.low, iv.high):
        assert x is None or math.isfinite(x)
    assert (iv.low is None) == (iv.reason is not None)
    assert "nan" not in iv.text()


# --- Wilson ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("k", "n", "level"), [(8, 10, 0.95), (0, 25, 0.95), (397, 400, 0.9), (50, 100, 0.99)])
def test_wilson_is_the_score_interval(k: int, n: int, level: float) -> None:
    z = norm.ppf(0.5 + level / 2)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    iv = wilson("accuracy", k, n, level=level)
    assert iv.estimate == pytest.approx(p)
    assert iv.low == pytest.approx(centre - half, abs=1e-9)
    assert iv.high == pytest.approx(centre + half, abs=1e-9)
    assert iv.method == "Wilson" and iv.n == n and iv.level == level
    no_nan(iv)


def test_wilson_of_no_items_says_why() -> None:
    iv = wilson("accuracy", 0, 0)
    assert iv.estimate is None and iv.low is None and iv.reason == "no items"
    assert iv.text() == "undefined (no items)"


def test_level_outside_0_1_is_refused() -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        wilson("x", 1, 2, level=1.0)


# --- bootstrap over items ----------------------------------------------------------------------------------------


def test_bootstrap_is_reproducible_from_its_recorded_seed() -> None:
    rng = random.Random(1)
    groups = [[rng.random() < 0.7] for _ in range(60)]
    a = bootstrap_items("share", groups, mean, seed=5)
    b = bootstrap_items("share", groups, mean, seed=a.seed)  # type: ignore[arg-type]
    c = bootstrap_items("share", groups, mean, seed=6)
    assert a.seed == 5 and a.resamples == 2000
    assert (a.low, a.high) == (b.low, b.high)
    assert (a.low, a.high) != (c.low, c.high)
    assert a.low < a.estimate < a.high  # type: ignore[operator]
    assert "seed 5" in a.text()
    no_nan(a)


@pytest.mark.parametrize("method", ["BCa", "percentile"])
def test_bootstrap_resamples_items_not_sessions(method: str) -> None:
    # 30 items, each seen in 5 sessions that always agree: the evidence is 30 items, not 150 sessions.
    rng = random.Random(2)
    per_item = [rng.random() < 0.5 for _ in range(30)]
    grouped = bootstrap_items("share", [[x] * 5 for x in per_item], mean, method=method)  # type: ignore[arg-type]
    as_items = bootstrap_items("share", [[x] for x in per_item], mean, method=method)  # type: ignore[arg-type]
    as_sessions = bootstrap_items("share", [[x] for x in per_item for _ in range(5)], mean, method=method)  # type: ignore[arg-type]
    assert grouped.n == 30 and as_sessions.n == 150
    assert grouped.width == pytest.approx(as_items.width, rel=0.1)
    assert as_sessions.width < 0.6 * grouped.width  # type: ignore[operator]
    assert grouped.method == f"bootstrap {method} over items"


def test_bootstrap_that_cannot_be_computed_says_why() -> None:
    constant = bootstrap_items("share", [[True]] * 20, mean)
    assert constant.estimate == 1.0 and constant.low is None
    assert "every resample gives 1" in (constant.reason or "")
    one = bootstrap_items("share", [[True, False]], mean)
    assert one.estimate == 0.5 and one.reason == "fewer than 2 items to resample"
    empty = bootstrap_items("share", [], mean)
    assert empty.estimate is None and empty.reason == "no items"
    undefined = bootstrap_items("r", [[1.0]] * 5, lambda xs: math.nan)
    assert undefined.estimate is None and "undefined" in (undefined.reason or "")
    # defined on the data, undefined on some resamples (a rare class drawn out of them)
    rare = bootstrap_items("odd", [[1.0]] + [[0.0]] * 9, lambda xs: 1.0 if 1.0 in xs else math.nan)
    assert rare.estimate == 1.0 and "undefined on" in (rare.reason or "") and "resamples" in (rare.reason or "")
    for iv in (constant, one, empty, undefined, rare):
        no_nan(iv)


# --- agreement ---------------------------------------------------------------------------------------------------


def test_krippendorff_alpha() -> None:
    assert krippendorff_alpha([[1, 0, 1, 0], [1, 0, 1, 0]]) == pytest.approx(1.0)
    # a missing label is nan; a unit with one label tells nothing
    assert krippendorff_alpha([[1, 0, 1, math.nan], [1, 0, 1, 0]]) == pytest.approx(1.0)
    # systematic disagreement is below 0
    assert krippendorff_alpha([[1, 0, 1, 0], [0, 1, 0, 1]]) < 0
    assert math.isnan(krippendorff_alpha([[1, 1], [1, 1]]))  # one value: undefined
    assert math.isnan(krippendorff_alpha([[1, math.nan], [math.nan, 0]]))  # no unit labelled twice


def test_verdict_agreement_counts_and_rates() -> None:
    # 40 items: people accept 25; the verdict accepts 20 of those and 3 of the 15 people reject
    pairs = [(True, True)] * 20 + [(False, True)] * 5 + [(True, False)] * 3 + [(False, False)] * 12
    a = verdict_agreement([[p] for p in pairs], resamples=500)
    assert (a.confusion.tp, a.confusion.fp, a.confusion.fn, a.confusion.tn) == (20, 3, 5, 12)
    assert a.items == a.sessions == 40
    assert a.accuracy.estimate == pytest.approx(32 / 40) and a.accuracy.method == "Wilson"
    assert a.tpr.estimate == pytest.approx(20 / 25) and a.tpr.n == 25
    assert a.tnr.estimate == pytest.approx(12 / 15) and a.tnr.n == 15
    from sklearn.metrics import cohen_kappa_score

    assert a.kappa.estimate == pytest.approx(cohen_kappa_score([v for v, _ in pairs], [h for _, h in pairs]))
    assert a.kappa.low < a.kappa.estimate < a.kappa.high  # type: ignore[operator]
    assert a.alpha.estimate == pytest.approx(
        krippendorff_alpha([[float(v) for v, _ in pairs], [float(h) for _, h in pairs]])
    )
    for iv in (a.accuracy, a.tpr, a.tnr, a.kappa, a.alpha):
        no_nan(iv)


def test_verdict_agreement_with_repeats_resamples_items() -> None:
    groups = [[(True, True), (False, True), (True, True)], [(False, False)] * 3, [(True, False)] * 3] * 10
    a = verdict_agreement(groups, resamples=500)
    assert a.kappa.resamples == 500
    assert a.items == 30 and a.sessions == 90
    assert a.accuracy.method.startswith("bootstrap") and a.accuracy.n == 30
    assert a.accuracy.estimate == pytest.approx(50 / 90)


def test_verdict_agreement_one_class_says_why() -> None:
    a = verdict_agreement([[(True, True)]] * 10)
    assert a.accuracy.estimate == 1.0
    assert a.tnr.estimate is None and a.tnr.reason == "no item that people reject"
    assert a.kappa.estimate is None and a.kappa.reason
    assert a.alpha.estimate is None and a.alpha.reason
    for iv in (a.accuracy, a.tpr, a.tnr, a.kappa, a.alpha):
        no_nan(iv)


def test_human_agreement_between_annotators() -> None:
    rng = random.Random(3)
    labels: dict[str, dict[str, bool]] = {}
    for i in range(60):
        truth = rng.random() < 0.5
        labels[f"q{i}"] = {"ann": truth, "bob": truth if i % 10 else not truth}
    labels["q-alone"] = {"ann": True}
    h = human_agreement(labels, resamples=500)
    assert h is not None and h.annotators == ["ann", "bob"] and h.items == 60
    assert 0.6 < h.alpha.estimate < 0.95  # type: ignore[operator]
    assert len(h.kappas) == 1 and h.kappas[0][:2] == ("ann", "bob")
    assert h.kappas[0][2].estimate == pytest.approx(
        h.alpha.estimate, abs=0.02  # type: ignore[arg-type]
    )  # κ ≈ α for two raters on nominal data
    assert human_agreement({"q": {"ann": True}}) is None


# --- paired ------------------------------------------------------------------------------------------------------


def test_mcnemar_exact_one_directional_difference() -> None:
    # two runs over 200 items that differ on 30, all in one direction
    a = [True] * 130 + [False] * 70
    b = [True] * 100 + [False] * 100
    m = mcnemar_exact(a, b)
    assert (m.n, m.only_a, m.only_b) == (200, 30, 0)
    assert m.p_value < 0.001
    assert m.p_value == pytest.approx(binomtest(0, 30, 0.5).pvalue)
    assert m.text().startswith("McNemar exact: p < 0.001 (30 items only A accepts, 0 only B accepts, of 200)")


def test_mcnemar_identical_runs_p_is_1() -> None:
    a = [random.Random(4).random() < 0.5 for _ in range(200)]
    m = mcnemar_exact(a, list(a))
    assert m.p_value == 1.0 and "p = 1.000" in m.text()


def test_mcnemar_balanced_discordance() -> None:
    a = [True] * 10 + [False] * 10 + [True] * 5
    b = [False] * 10 + [True] * 10 + [True] * 5
    m = mcnemar_exact(a, b)
    assert m.p_value == pytest.approx(binomtest(10, 20, 0.5).pvalue) == pytest.approx(1.0)


def test_paired_difference_of_accuracy() -> None:
    rng = random.Random(5)
    # run A right on 85% of items, run B wrong on a further 10% of them
    a = [rng.random() < 0.85 for _ in range(300)]
    b = [x and rng.random() > 0.12 for x in a]
    iv = paired_difference("accuracy A − B", [[x] for x in a], [[y] for y in b], mean)  # type: ignore[arg-type]
    assert iv.estimate == pytest.approx(mean(a) - mean(b))  # type: ignore[arg-type]
    assert 0 < iv.low < iv.estimate < iv.high  # type: ignore[operator]
    # the paired interval is narrower than one that ignores the pairing (A and B resampled apart)
    unpaired = math.sqrt(np.var(a) / 300 + np.var(b) / 300) * 2 * 1.96
    assert iv.width < unpaired  # type: ignore[operator]
    same = paired_difference("accuracy A − B", [[x] for x in a], [[x] for x in a], mean)  # type: ignore[arg-type]
    assert same.estimate == 0.0 and same.low is None and "every resample gives 0" in (same.reason or "")


# --- prediction-powered inference --------------------------------------------------------------------------------


def test_ppi_is_narrower_than_classical_and_debiases_the_naive_share() -> None:
    rng = np.random.default_rng(6)
    big_n, n = 5000, 200
    y = rng.random(big_n + n) < 0.6  # true share 0.6
    # a verdict right 90% of the time but biased towards accepting
    yhat = np.where(rng.random(big_n + n) < 0.9, y, True)
    est = ppi_mean(y[:n].astype(float), yhat[:n].astype(float), yhat[n:].astype(float))
    assert est.labelled == n and est.unlabelled == big_n
    assert est.naive == pytest.approx(yhat.mean())
    assert est.naive > 0.63  # type: ignore[operator]
    assert est.ppi.width < est.classical.width  # type: ignore[operator]
    assert est.ppi.covers(0.6) and est.classical.covers(0.6)
    assert est.ppi.method.startswith("PPI") and est.classical.estimate == pytest.approx(y[:n].mean())
    text = est.text()
    assert "prediction-powered" in text and "classical" in text and "naïve" in text and "nan" not in text


def test_ppi_that_cannot_be_computed_says_why() -> None:
    one = ppi_mean([1.0], [1.0], [0.0, 1.0])
    assert one.ppi.reason == "fewer than 2 labelled items" and one.classical.reason == "fewer than 2 labelled items"
    census = ppi_mean([1.0, 0.0, 1.0], [1.0, 0.0, 0.0], [])
    assert census.ppi.low is None and "every item is labelled" in (census.ppi.reason or "")
    assert census.classical.low is not None
    flat = ppi_mean([1.0] * 5, [1.0] * 5, [1.0] * 20)
    assert flat.ppi.reason and flat.classical.reason and "same" in flat.classical.reason
    for e in (one, census, flat):
        no_nan(e.ppi)
        no_nan(e.classical)
    with pytest.raises(ValueError, match="length mismatch"):
        ppi_mean([1.0], [1.0, 0.0], [])


@pytest.mark.parametrize("seed", range(40))
def test_the_classical_interval_is_ppi_pythons_to_the_last_digit(seed: int) -> None:
    from ppi_py import classical_mean_ci

    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 5000))
    y = (rng.random(n) < rng.random()).astype(float) if seed % 2 else rng.normal(rng.normal(), 3, n)
    level = float(rng.choice([0.5, 0.8, 0.9, 0.95, 0.99, 0.999]))
    if np.ptp(y) == 0:
        y[0] = 1 - y[0]
    low, high = classical_mean_ci(y, alpha=1 - level)
    got = ppi_mean(list(y), list(y), [], level=level).classical
    assert (got.low, got.high) == (float(low), float(high))  # equal, not approximately


def test_a_census_of_labels_never_loads_ppi_python(tmp_path) -> None:
    """Every item labelled (the protocol's gold, the usual certificate): the classical interval alone, so neither
    ``ppi_py`` nor the numba it brings is imported; a random sample of labels imports it for the PPI estimate."""
    import subprocess
    import sys

    code = (
        "import sys; from voirdire.certificate import ppi_mean\n"
        "e = ppi_mean([1.0, 0.0, 1.0, 1.0], [1.0, 0.0, 0.0, 1.0], UNLABELLED)\n"
        "print(e.classical.low is not None, e.ppi.low is not None, 'ppi_py' in sys.modules, 'numba' in sys.modules)"
    )
    for unlabelled, expected in (("[]", "True False False False"), ("[1.0, 0.0, 1.0]", "True True True True")):
        out = subprocess.run([sys.executable, "-c", code.replace("UNLABELLED", unlabelled)], capture_output=True,
                             text=True, check=True, cwd=tmp_path)  # fmt: skip
        assert out.stdout.split() == expected.split(), out.stderr


# --- the sample ----------------------------------------------------------------------------------------------------


def test_draw_sample_is_seeded_distinct_and_independent_of_order() -> None:
    ids = [f"item-{i}" for i in range(1000)]
    a = draw_sample(ids, 200, seed=7)
    assert len(a) == len(set(a)) == 200 and set(a) <= set(ids)
    assert draw_sample(list(reversed(ids)), 200, seed=7) == a
    assert draw_sample(ids, 200, seed=8) != a
    assert a != sorted(a)  # random order, the order to label in
    assert sorted(draw_sample(ids[:10], 50, seed=1)) == sorted(ids[:10])
    with pytest.raises(ValueError, match="at least 1"):
        draw_sample(ids, 0, seed=1)


def test_bca_becomes_percentile_beyond_its_item_limit() -> None:
    from voirdire.certificate.intervals import BCA_MAX_ITEMS

    rng = random.Random(9)
    many = [[rng.random() < 0.5] for _ in range(BCA_MAX_ITEMS + 1)]
    iv = bootstrap_items("share", many, mean, resamples=200)  # type: ignore[arg-type]
    assert iv.method == "bootstrap percentile over items" and iv.low is not None
    assert bootstrap_items("share", many[:50], mean).method == "bootstrap BCa over items"  # type: ignore[arg-type]


def test_a_share_interval_is_cut_to_0_1() -> None:
    wide = ppi_mean([1.0, 1.0, 0.0], [1.0, 1.0, 1.0], [], bounds=(0.0, 1.0))
    assert wide.classical.high == 1.0 and wide.classical.low > 0  # type: ignore[operator]
    assert wide.classical.method == "normal, cut to [0.0, 1.0]"
    free = ppi_mean([1.0, 1.0, 0.0], [1.0, 1.0, 1.0], [])
    assert free.classical.high > 1.0 and free.classical.method == "normal"  # type: ignore[operator]


def test_bootstrap_items_drawn_in_batches_is_the_interval_of_one_draw() -> None:
    """``bootstrap_items`` resamples in batches (no resamples x items array at once); the interval is the one
    scipy gives drawing every resample at once, with the same seed."""
    from scipy.stats import bootstrap

    from voirdire.certificate.intervals import DEFAULT_SEED, bootstrap_items

    rng = np.random.default_rng(3)
    values = [float(x) for x in rng.integers(0, 2, size=2500)]
    groups = [[x] for x in values]
    got = bootstrap_items("rate", groups, lambda xs: sum(xs) / len(xs), resamples=300)
    ref = bootstrap(
        (np.arange(len(values)),), lambda idx: float(np.mean([values[int(i)] for i in idx])), vectorized=False,
        n_resamples=300, method="percentile", rng=np.random.default_rng(DEFAULT_SEED),
    )  # fmt: skip
    assert got.method == "bootstrap percentile over items"
    assert (got.low, got.high) == pytest.approx((ref.confidence_interval.low, ref.confidence_interval.high))


def test_bootstrap_counts_drawn_in_batches_is_the_interval_of_one_draw() -> None:
    """``bootstrap_counts`` resamples a few at a time at 50,000 items (a batch of 2 here); the interval is exactly
    the one scipy gives drawing every resample in one batch, with the same seed."""
    from scipy.stats import bootstrap

    from voirdire.certificate.agreement import kappa_of_counts
    from voirdire.certificate.intervals import DEFAULT_SEED, bootstrap_counts

    rows = np.random.default_rng(4).integers(0, 2, size=(50_000, 4)).astype(float)
    got = bootstrap_counts("κ", rows, kappa_of_counts, resamples=40)

    def summed(idx: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.asarray(kappa_of_counts(rows[np.asarray(idx, dtype=int)].sum(axis=-2)), dtype=float)

    ref = bootstrap(
        (np.arange(len(rows)),), summed, vectorized=True, n_resamples=40, method="percentile",
        rng=np.random.default_rng(DEFAULT_SEED), batch=40,
    )  # fmt: skip
    assert got.method == "bootstrap percentile over items"
    assert (got.low, got.high) == (ref.confidence_interval.low, ref.confidence_interval.high)


# --- every resample at once ----------------------------------------------------------------------------------------


def _pairs_of_items(n: int, repeats: int, seed: int) -> list[list[tuple[bool, bool]]]:
    rng = random.Random(seed)
    return [[(rng.random() < 0.4, rng.random() < 0.5) for _ in range(rng.randint(1, repeats))] for _ in range(n)]


@pytest.mark.parametrize(("n", "repeats"), [(60, 1), (60, 3), (1200, 2)])  # BCa, BCa with repeats, percentile
def test_bootstrap_f1_is_bootstrap_items_of_f1_of_pairs(n: int, repeats: int) -> None:
    from voirdire.certificate import bootstrap_f1
    from voirdire.reports import f1_of_pairs

    groups = _pairs_of_items(n, repeats, seed=n + repeats)
    fast = bootstrap_f1("F1", groups, resamples=400, seed=5)
    slow = bootstrap_items("F1", groups, f1_of_pairs, resamples=400, seed=5)
    method = "BCa" if n <= 1000 else "percentile"
    assert fast.method == slow.method == f"bootstrap {method} over items"
    assert fast.estimate == slow.estimate
    assert fast.low is not None and (fast.low, fast.high) == pytest.approx((slow.low, slow.high), abs=1e-12)
    assert fast.model_dump(exclude={"low", "high"}) == slow.model_dump(exclude={"low", "high"})


def test_bootstrap_f1_where_bootstrap_items_has_no_interval_says_the_same() -> None:
    from voirdire.certificate import bootstrap_f1
    from voirdire.reports import f1_of_pairs

    cases: list[list[list[tuple[bool, bool]]]] = [
        [],  # no items
        [[], []],  # items without a pair
        [[(True, True)]],  # one item
        [[(False, False)], [(False, False)]],  # no positives: F1 is 0 in every resample
        [[(True, True)], [(True, True)], [(True, True)]],  # perfect: 1 in every resample
    ]
    for groups in cases:
        fast, slow = bootstrap_f1("F1", groups), bootstrap_items("F1", groups, f1_of_pairs)
        assert fast == slow, groups


def test_a_proportion_with_repeats_is_bootstrap_items_of_the_share() -> None:
    from voirdire.certificate import proportion

    groups = [[x for x, _ in g] for g in _pairs_of_items(80, 3, seed=7)]
    fast = proportion("rate", groups, resamples=400, seed=9)
    slow = bootstrap_items("rate", groups, lambda xs: sum(xs) / len(xs), resamples=400, seed=9)
    assert fast.estimate == pytest.approx(slow.estimate)
    assert fast.low is not None and (fast.low, fast.high) == pytest.approx((slow.low, slow.high), abs=1e-12)


def test_a_paired_rate_difference_is_the_item_by_item_interval() -> None:
    """The vectorized paired difference of two rates gives the interval the generic one gives for the same
    resamples, with items of one to three sessions (repeats) on each side."""
    from voirdire.certificate.paired import paired_rate_difference

    rng = random.Random(11)
    a = [[rng.random() < 0.6 for _ in range(rng.randint(1, 3))] for _ in range(120)]
    b = [[rng.random() < 0.45 for _ in range(rng.randint(1, 3))] for _ in range(120)]

    def mean(xs: list[bool]) -> float:
        return sum(xs) / len(xs)

    slow = paired_difference("d", a, b, mean, resamples=400, seed=5)  # type: ignore[arg-type]
    fast = paired_rate_difference("d", a, b, resamples=400, seed=5)
    assert slow.low is not None and fast.low is not None and fast.high is not None
    assert fast.estimate == pytest.approx(slow.estimate)
    assert (fast.low, fast.high) == (pytest.approx(slow.low), pytest.approx(slow.high))
    assert fast.method == slow.method
    with pytest.raises(ValueError, match="length mismatch"):
        paired_rate_difference("d", a, b[:-1])

