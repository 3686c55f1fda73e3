"""voirdire.reports.metrics against scikit-learn / scipy on random data."""

from __future__ import annotations

import math
import random

import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score, f1_score, precision_score, recall_score, roc_auc_score

from voirdire.reports import metrics


@pytest.mark.parametrize("seed", range(5))
def test_against_reference_implementations(seed: int) -> None:
    rng = random.Random(seed)
    gold = [rng.random() < 0.4 for _ in range(60)]
    pred = [rng.random() < 0.5 for _ in range(60)]
    scores = [round(rng.random(), 1) for _ in range(60)]  # rounded: ties exercise average ranks
    prf = metrics.precision_recall_f1(gold, pred)
    assert prf.precision == pytest.approx(precision_score(gold, pred, zero_division=0))
    assert prf.recall == pytest.approx(recall_score(gold, pred, zero_division=0))
    assert prf.f1 == pytest.approx(f1_score(gold, pred, zero_division=0))
    assert metrics.auroc(gold, scores) == pytest.approx(roc_auc_score(gold, scores))
    assert metrics.cohen_kappa(gold, pred) == pytest.approx(cohen_kappa_score(gold, pred))
    y = [s + rng.random() for s in scores]
    assert metrics.pearson(scores, y) == pytest.approx(stats.pearsonr(scores, y)[0])
    assert metrics.spearman(scores, y) == pytest.approx(stats.spearmanr(scores, y)[0])
    assert metrics.kendall_tau_b(scores, y) == pytest.approx(stats.kendalltau(scores, y)[0])


def test_edge_cases() -> None:
    assert metrics.precision_recall_f1([False, False], [False, False]).f1 == 0.0
    assert math.isnan(metrics.auroc([True, True], [0.1, 0.2]))
    assert metrics.mean_sd([1.0, 3.0]) == (2.0, pytest.approx(math.sqrt(2)))
    with pytest.raises(ValueError, match="length mismatch"):
        metrics.accuracy([1], [1, 2])
