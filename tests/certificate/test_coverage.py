"""Acceptance simulations: the intervals cover the truth as often as they claim.

A scripted judge is right with probability 0.8 on a seeded schedule (each run's schedule from its own seed). Over
400 seeded runs, the 95% accuracy interval the certificate reports must cover 0.8 in at least 370 (a binomial
with p = 0.95 falls below 370 of 400 with probability about 0.01); and the prediction-powered interval from 200
human labels plus 5,000 unlabelled verdicts must cover the true share as often, while being narrower in median
than the classical interval from the 200 labels alone.
"""

from __future__ import annotations

import statistics

import numpy as np

from voirdire.certificate import draw_sample, ppi_mean, proportion

RUNS = 400
RIGHT = 0.8


def schedule(seed: int, n: int) -> list[bool]:
    """Whether the scripted judge is right on each of n items, drawn with probability 0.8 from this seed."""
    return (np.random.default_rng(seed).random(n) < RIGHT).tolist()


def test_accuracy_interval_covers_the_judges_true_rate() -> None:
    covered = 0
    for seed in range(RUNS):
        right = schedule(seed, 200)
        interval = proportion("accuracy", [[r] for r in right])
        assert interval.method == "Wilson" and interval.low is not None
        covered += interval.covers(RIGHT)
    assert covered >= 370, f"the 95% interval covered the true accuracy in {covered} of {RUNS} runs"


def test_accuracy_interval_over_repeated_items_covers() -> None:
    # 100 items examined 3 times each; an item's three verdicts share most of their luck (the judge is right on
    # an item with probability 0.95 or 0.2, 0.8 on average over items): the bootstrap over items must cover the
    # mean rate, which a bootstrap over sessions would not as often.
    covered = 0
    for seed in range(RUNS // 4):  # 100 runs: each bootstrap is 2,000 resamples
        rng = np.random.default_rng(seed)
        easy = rng.random(100) < 0.6 / 0.75
        p = np.where(easy, 0.95, 0.2)
        groups = [[bool(x) for x in rng.random(3) < pi] for pi in p]
        interval = proportion("accuracy", groups, seed=seed)
        true_rate = 0.8 * 0.95 + 0.2 * 0.2
        assert interval.n == 100 and interval.method.startswith("bootstrap")
        covered += interval.covers(true_rate)
    assert covered >= 90, f"covered in {covered} of {RUNS // 4} runs"


def test_ppi_from_200_labels_and_5000_verdicts_covers_and_is_narrower() -> None:
    share = 0.6  # the true share of items people accept
    covered = covered_classical = 0
    ppi_widths, classical_widths = [], []
    for seed in range(RUNS):
        rng = np.random.default_rng(10_000 + seed)
        truth = rng.random(5200) < share
        right = rng.random(5200) < RIGHT
        verdict = np.where(right, truth, ~truth)
        labelled = {int(i) for i in draw_sample([str(i) for i in range(5200)], 200, seed=seed)}
        mask = np.array([i in labelled for i in range(5200)])
        est = ppi_mean(truth[mask].astype(float), verdict[mask].astype(float), verdict[~mask].astype(float))
        assert est.labelled == 200 and est.unlabelled == 5000
        covered += est.ppi.covers(share)
        covered_classical += est.classical.covers(share)
        ppi_widths.append(est.ppi.width)
        classical_widths.append(est.classical.width)
    assert covered >= 370, f"PPI covered the true share in {covered} of {RUNS} runs"
    assert covered_classical >= 360
    assert statistics.median(ppi_widths) < statistics.median(classical_widths)
