"""Lemma 1, Theorem 1 (§7.1) and the undetected-lie simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from voirdire.protocols.no_data.algorithm import NoDataParams
from voirdire.protocols.no_data.challenges import RuleVerifier
from voirdire.protocols.no_data.experiments import no_data_algorithm
from voirdire.protocols.no_data.generators import OracleGenerator, Proposal, RandomGenerator
from voirdire.protocols.no_data.rubric import IP_RUBRIC, OOP_RUBRIC
from voirdire.protocols.no_data.simulation import STRATEGIES, knows_total, undetected_rate, wilson_interval
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


def test_strategies_that_know_or_copy_c_bar_are_split_from_the_liars():
    """Lemma 3 treats an evaluator that reproduces C̄(x) as knowing f; Lemma 1 is judged on the others only."""
    knowing = {(r.name, s) for r in (IP_RUBRIC, OOP_RUBRIC) for s in STRATEGIES if knows_total(s, r)}
    assert knowing == {
        ("ip", "lie-p"),
        ("ip", "copycat"),
        ("oop", "lie-p"),
        ("oop", "copycat"),
        ("oop", "ch2-cheater"),  # C̄ = C on OOP: reproducing C(x) is reproducing C̄(x)
        ("oop", "lie-sigma"),
    }
    with pytest.raises(ValueError, match="unknown strategy"):
        knows_total("oracle", IP_RUBRIC)


async def test_simulation_lie_1_as_the_paper_words_it_and_as_the_notebook_built_it():
    paper = await undetected_rate("lie-sigma", IP_RUBRIC, XS, rounds=3, trials=900)
    notebook = await undetected_rate("lie-sigma-permutation", IP_RUBRIC, XS, rounds=3, trials=900)
    assert not paper.knows_total and not notebook.knows_total
    for row in (paper, notebook):
        assert row.ci_low <= row.exact <= row.ci_high and row.ci_low > row.lemma1
    # The paper's Lie 1 passes Challenge 2 every round: at least (1/2)^3, far above the notebook's ~17%.
    assert paper.exact > 0.5 > 0.3 > notebook.exact > 0.1
    oop = await undetected_rate("lie-sigma", OOP_RUBRIC, XS, rounds=3, trials=50)
    assert oop.knows_total and oop.exact == 1.0


def test_lie_simulation_bench_judges_lemma_1_on_liars_that_do_not_know_c_bar():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
    try:
        from no_data_lie_simulation import markdown
    finally:
        sys.path.pop(0)
    from voirdire.protocols.no_data.simulation import UndetectedRate

    def row(strategy: str, rubric: str, rate: float, knows: bool) -> UndetectedRate:
        return UndetectedRate(
            strategy=strategy,
            rubric=rubric,
            rounds=3,
            trials=2000,
            undetected=rate,
            ci_low=rate - 0.01,
            ci_high=rate + 0.01,
            exact=rate,
            per_round_exact=rate ** (1 / 3),
            lemma1=1 / 64,
            knows_total=knows,
        )

    text = markdown([row("ch2-cheater", "ip", 0.125, False), row("copycat", "ip", 1.0, True)], "cmd", 1.0)
    liars, knowing = text.split("##### Liars that do not know C̄")[1].split("##### Strategies that know or copy")
    assert "| IP | ch2-cheater | 3 |" in liars and "above (1/4)^r" in liars and "copycat" not in liars
    assert "| IP | copycat | 3 |" in knowing and "above" not in knowing.split("| IP | copycat")[1]
    verdict = text.split("**Lemma 1 verdict")[1].split("\n")[0]
    assert "ch2-cheater 12.5%" in verdict and "copycat" not in verdict
