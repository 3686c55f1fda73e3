"""Lemma 1, Theorem 1 (§7.1) and the undetected-lie simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from voirdire.protocols.no_data.algorithm import NoDataParams, no_data_algorithm
from voirdire.protocols.no_data.challenges import RuleVerifier
from voirdire.protocols.no_data.generators import OracleGenerator, Proposal, RandomGenerator
from voirdire.protocols.no_data.rubric import IP_RUBRIC, OOP_RUBRIC
from voirdire.protocols.no_data.simulation import undetected_rate, wilson_interval
from voirdire.protocols.no_data.theory import (
    lemma1_undetected_probability,
    round_pass_probability,
    theorem1_accuracy_bound,
    theory_report,
)

rng = np.random.default_rng(5)
XS = ["".join(map(str, rng.integers(0, 2, 12))) for _ in range(300)]


def test_lemma_1_values():
    assert lemma1_undetected_probability(3) == pytest.approx(0.015625)  # Remark 3: "1.6%"
    assert lemma1_undetected_probability(0) == 1.0
    with pytest.raises(ValueError):
        lemma1_undetected_probability(-1)


def test_theorem_1_edge_cases():
    assert theorem1_accuracy_bound(1.0, 0.3, 3) == 1.0  # a perfect evaluator
    assert theorem1_accuracy_bound(0.7, 0.0, 3) == pytest.approx(0.7)  # no flips: accuracy is α
    assert theorem1_accuracy_bound(0.7, 1.0, 3) == pytest.approx(1 - 0.3 * 0.25**3)
    assert theorem1_accuracy_bound(0.0, 0.5, 1) == pytest.approx(0.5 * (1 - 0.25))  # detected, then flipped
    with pytest.raises(ValueError, match="phi"):
        theorem1_accuracy_bound(0.5, 1.5, 3)
    report = theory_report(3, 0.6, alpha=0.8)
    assert report.theorem1_bound == pytest.approx(theorem1_accuracy_bound(0.8, 0.6, 3))
    assert theory_report(3, 0.6).theorem1_bound is None


class _Mixed:
    """Theorem 1's evaluator: honest (oracle x') where it labels right, lying (random x') where wrong."""

    def __init__(self, wrong: set[str]) -> None:
        self.wrong = wrong
        self.oracle, self.random = OracleGenerator(OOP_RUBRIC), RandomGenerator()

    async def label(self, x: str, round: int, rng: np.random.Generator) -> int:
        return 1 - OOP_RUBRIC.label(x) if x in self.wrong else OOP_RUBRIC.label(x)

    async def propose(self, x: str, y_hat: int, round: int, rng: np.random.Generator) -> Proposal:
        gen = self.random if x in self.wrong else self.oracle
        return await gen.propose(x, y_hat, round, rng)


@pytest.mark.parametrize("phi", [0.0, 0.5, 1.0])
async def test_algorithm_1_accuracy_matches_theorem_1_with_the_measured_undetected_rate(phi):
    """Under Theorem 1's assumption the expected accuracy is exactly 1 - ε(1 - φ + φ u), u the actual
    undetected rate of the liar; with u ≤ (1/4)^r it is at least eq. (3)'s expression."""
    xs = XS * 2
    wrong = set(XS[::3])
    verifier = RuleVerifier(OOP_RUBRIC)
    run = await no_data_algorithm(xs, _Mixed(wrong), verifier, NoDataParams(rounds=3, phi=phi, seed=1))
    acc = sum(p == OOP_RUBRIC.label(x) for p, x in zip(run.predictions, xs, strict=True)) / len(xs)
    eps = sum(x in wrong for x in xs) / len(xs)
    u = sum(
        round_pass_probability(x, RandomGenerator().distribution(x, 0), verifier) ** 3 for x in xs if x in wrong
    ) / sum(x in wrong for x in xs)
    expected = 1 - eps * (1 - phi + phi * u)
    assert abs(acc - expected) <= 4.5 * math.sqrt(expected * (1 - expected) / len(xs)) + 1 / len(xs)
    assert expected >= theorem1_accuracy_bound(1 - eps, phi, 3) - 1e-12  # u < (1/4)^3 for a random guesser


async def test_simulation_reports_the_half_per_round_cheat():
    row = await undetected_rate("ch2-cheater", IP_RUBRIC, XS, rounds=3, trials=1500)
    assert row.exact == pytest.approx(0.125)
    assert row.ci_low <= 0.125 <= row.ci_high
    assert row.undetected > row.lemma1  # Lemma 1's (1/4)^r does not bound this liar
    consistent = await undetected_rate("consistent", IP_RUBRIC, XS, rounds=2, trials=300)
    assert consistent.undetected == 0.0 and consistent.exact == 0.0


def test_wilson_interval():
    low, high = wilson_interval(0, 100)
    assert low == 0.0 and 0.03 < high < 0.04
    low, high = wilson_interval(50, 100)
    assert low < 0.5 < high
