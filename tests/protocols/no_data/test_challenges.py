"""Challenges 1 and 2 (§6.1.1, eq. 2) and the distance relaxation (App. C.1)."""

from __future__ import annotations

import numpy as np
import pytest

from voirdire.protocols.no_data.challenges import (
    Challenge,
    RuleVerifier,
    challenge_1,
    challenge_2,
    normalized_hamming,
)
from voirdire.protocols.no_data.rubric import IP_RUBRIC, OOP_RUBRIC

X = "011111100000"  # C = (1, 1, 1); c1a = 1, c1b = 0


def test_identical_total_evaluation_passes_both():
    other = "000111111000"  # also: six ones, starts with 0, no 10101
    assert IP_RUBRIC.evaluate_total(other) == IP_RUBRIC.evaluate_total(X)
    assert challenge_1(X, other, IP_RUBRIC).passed
    assert challenge_2(X, other, IP_RUBRIC).passed


def test_same_encoding_different_structure_passes_2_fails_1():
    # c1 = 1 via "contains 10101" instead of "starts with 0": same C, different C̄.
    other = "110101011000"
    assert IP_RUBRIC.evaluate(other) == IP_RUBRIC.evaluate(X)
    out1 = challenge_1(X, other, IP_RUBRIC)
    assert not out1.passed and {"c1a", "c1b"} <= set(out1.detail["differing"])
    assert challenge_2(X, other, IP_RUBRIC).passed


def test_different_encoding_fails_both():
    other = "100000000000"
    assert not challenge_1(X, other, IP_RUBRIC).passed
    out2 = challenge_2(X, other, IP_RUBRIC)
    assert not out2.passed and "c2" in out2.reason


@pytest.mark.parametrize("bad", ["", "0121", "0101", "0111111000001"])
def test_malformed_x_prime_fails(bad):
    for out in (challenge_1(X, bad, IP_RUBRIC), challenge_2(X, bad, IP_RUBRIC)):
        assert not out.passed and "x'" in out.reason


def test_distance_relaxation_of_challenge_2():
    x, one_off = "111000000000", "111000000001"  # OOP: differ only on c1 (ends with 1)
    assert normalized_hamming(OOP_RUBRIC.evaluate(x), OOP_RUBRIC.evaluate(one_off)) == pytest.approx(1 / 3)
    assert not challenge_2(x, one_off, OOP_RUBRIC).passed
    assert challenge_2(x, one_off, OOP_RUBRIC, epsilon=0.5).passed
    assert not challenge_2(x, one_off, OOP_RUBRIC, epsilon=0.3).passed
    with pytest.raises(ValueError, match="epsilon"):
        RuleVerifier(OOP_RUBRIC, epsilon=0.0)
    with pytest.raises(ValueError, match="epsilon"):
        RuleVerifier(OOP_RUBRIC, epsilon=0.75)


def test_substring_reading_of_eq_2():
    assert challenge_1(X, X, IP_RUBRIC, subsets="substrings").passed
    out = challenge_1(X, "000000000000", IP_RUBRIC, subsets="substrings")
    assert not out.passed and "s" in out.detail


def test_verifier_draws_challenges_uniformly():
    rng = np.random.default_rng(0)
    verifier = RuleVerifier(IP_RUBRIC)
    draws = [verifier.draw(rng) for _ in range(4000)]
    ones = sum(d is Challenge.EQUALITY_UP_TO_PERMUTATION for d in draws)
    assert set(draws) == {Challenge(1), Challenge(2)}
    assert abs(ones / 4000 - 0.5) < 4.5 * (0.25 / 4000) ** 0.5


async def test_verifier_check_dispatches_on_the_challenge():
    verifier = RuleVerifier(IP_RUBRIC)
    other = "110101011000"
    assert not (await verifier.check(Challenge(1), X, other)).passed
    assert (await verifier.check(Challenge(2), X, other)).passed
