"""Reliability tools (App. A.2) and the private metric helpers, checked against independent computations."""

from __future__ import annotations

import math
import random

import pytest

from voirdire.protocols.qa_entailment.reliability import (
    corpus_bleu,
    exact_match_rate,
    pairwise_kappa,
    statement_agreement,
)
from voirdire.protocols.qa_entailment.scoring import binary_scores

sklearn_metrics = pytest.importorskip("sklearn.metrics")


def test_binary_scores_agree_with_sklearn() -> None:
    rng = random.Random(7)
    for _ in range(20):
        n = rng.randint(5, 60)
        gold = [rng.random() < 0.6 for _ in range(n)]
        pred = [rng.random() < 0.5 for _ in range(n)]
        s = binary_scores(pred, gold)
        assert s.f1 == pytest.approx(sklearn_metrics.f1_score(gold, pred, zero_division=0))
        assert s.accuracy == pytest.approx(sklearn_metrics.accuracy_score(gold, pred))
        assert s.precision == pytest.approx(sklearn_metrics.precision_score(gold, pred, zero_division=0))
        tn, fp, fn, tp = sklearn_metrics.confusion_matrix(gold, pred, labels=[False, True]).ravel()
        assert (s.tp, s.fp, s.fn, s.tn) == (tp, fp, fn, tn) and s.n == n
    with pytest.raises(ValueError):
        binary_scores([], [])


def test_pairwise_kappa_keys_like_tables_5_and_6() -> None:
    runs = {0: ["E", "N", "C", "E"], 1: ["E", "N", "C", "E"], 2: ["E", "E", "C", "N"]}
    kappas = pairwise_kappa(runs)
    assert list(kappas) == ["0 vs 1", "0 vs 2", "1 vs 2"]
    assert kappas["0 vs 1"] == pytest.approx(1.0)
    assert kappas["0 vs 2"] == pytest.approx(sklearn_metrics.cohen_kappa_score(runs[0], runs[2]))


def test_corpus_bleu() -> None:
    sents = ["Cyrus wrote the first declaration of human rights .", "The TV show is filmed on Oak Island ."]
    assert corpus_bleu(sents, sents) == pytest.approx(100.0)
    assert corpus_bleu(["a b c d"], ["e f g h"]) == 0.0
    # Hand computation: hypothesis = reference minus its last token. All hypothesis n-grams match, so every
    # precision is 1 and BLEU is the brevity penalty exp(1 - r/c) with r = 6, c = 5.
    ref = "the show is filmed on oak"
    hyp = "the show is filmed on"
    assert corpus_bleu([hyp], [ref]) == pytest.approx(100 * math.exp(1 - 6 / 5))
    # Longer hypotheses are not rewarded: precision drops instead.
    assert corpus_bleu([ref + " island today"], [ref]) < 100.0


def test_statement_agreement_table4() -> None:
    runs = {
        0: ["A is B .", "C is D .", "E is F ."],
        1: ["A is B .", "C is D .", "E is G ."],
        2: ["A is B .", "C is D .", "E is F ."],
    }
    agreement = statement_agreement(runs)
    assert agreement.pairs["0 vs 2"] == {"bleu": pytest.approx(100.0), "exact_match": pytest.approx(100.0)}
    assert agreement.pairs["0 vs 1"]["exact_match"] == pytest.approx(100 * 2 / 3)
    assert agreement.exact_match_mean == pytest.approx((100 + 2 * 100 * 2 / 3) / 3)
    assert 0 < agreement.pairs["0 vs 1"]["bleu"] < 100 and agreement.bleu_std > 0
    assert exact_match_rate([" x "], ["x"]) == 1.0
    with pytest.raises(ValueError):
        statement_agreement({0: ["x"]})
