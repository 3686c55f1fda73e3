"""The EV protocol and Algorithm 1 with scripted evaluators (§6, App. C.2), run as ``NoDataProtocol`` sessions."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from typing import Any

import numpy as np
import pytest

from voirdire.protocols.no_data.algorithm import (
    DECISION_STEP,
    ROUND_STEP,
    NoDataParams,
    coins,
    flip_decision,
)
from voirdire.protocols.no_data.challenges import Challenge, RuleVerifier
from voirdire.protocols.no_data.evaluators import ComposedEvaluator, RubricLabeller, ScriptedLabeller
from voirdire.protocols.no_data.experiments import no_data_algorithm, no_data_k_ary
from voirdire.protocols.no_data.generators import (
    LieApproxGenerator,
    LieFGenerator,
    LieSigmaGenerator,
    OracleGenerator,
    Proposal,
    RandomGenerator,
    make_generator,
)
from voirdire.protocols.no_data.protocol import NoDataItem, NoDataProtocol, NoDataProtocolParams
from voirdire.protocols.no_data.rubric import IP_RUBRIC, OOP_RUBRIC, CountAggregator, Rubric
from voirdire.protocols.no_data.simulation import Challenge2Cheater
from voirdire.protocols.no_data.theory import round_pass_probability
from voirdire.runner import run_in_memory
from voirdire.transcript import Step

rng = np.random.default_rng(20250603)
XS = ["".join(map(str, rng.integers(0, 2, 12))) for _ in range(400)]


def within(observed: float, expected: float, n: int, z: float = 4.5) -> bool:
    """Binomial tolerance: |observed - expected| within z standard errors (plus a continuity allowance)."""
    return abs(observed - expected) <= z * math.sqrt(max(expected * (1 - expected), 1e-12) / n) + 1.0 / n


def honest(rubric: Rubric) -> ComposedEvaluator:
    return ComposedEvaluator(RubricLabeller(rubric), OracleGenerator(rubric))


async def steps(xs: list[str], evaluator: Any, verifier: Any, rounds: int = 3, phi: float = 0.5) -> list[Step]:
    """The round and decision steps of one session per datapoint, from an in-memory transcript."""
    protocol = NoDataProtocol(NoDataProtocolParams(rounds=rounds, phi=phi), evaluator=evaluator, verifier=verifier)
    items = [NoDataItem(index=i, x=x) for i, x in enumerate(xs)]
    _, writer = await run_in_memory(protocol, items, keep=True)
    return [r for r in writer.records if isinstance(r, Step)]


@pytest.mark.parametrize("rubric", [IP_RUBRIC, OOP_RUBRIC], ids=["ip", "oop"])
async def test_honest_evaluator_always_passes(rubric):
    run = await no_data_algorithm(XS, honest(rubric), RuleVerifier(rubric), NoDataParams(rounds=5, phi=1.0))
    assert run.success_rate == 1.0
    assert run.flips == [0] * len(XS)
    assert run.predictions == [rubric.label(x) for x in XS]
    assert all(d.rounds_run == 5 for d in run.decisions)


@pytest.mark.parametrize("subsets", ["whole", "substrings"])
@pytest.mark.parametrize("rubric", [IP_RUBRIC, OOP_RUBRIC], ids=["ip", "oop"])
async def test_oracle_passes_with_probability_one_under_both_readings_of_s_x(rubric, subsets):
    """App. A.1.2: "Knowing f implies ... it will pass the checks from the verifier w.p.1" — under either
    reading of eq. (2), because the oracle matches the reading the (public) verifier uses."""
    verifier = RuleVerifier(rubric, subsets=subsets)
    oracle = make_generator("oracle", rubric, subsets=subsets)
    evaluator = ComposedEvaluator(RubricLabeller(rubric), oracle)
    run = await no_data_algorithm(XS, evaluator, verifier, NoDataParams(rounds=5, phi=1.0))
    assert run.success_rate == 1.0 and run.flip_rate == 0.0
    # Not only the sampled x': every x' the oracle may return passes both challenges.
    for x in XS[:40]:
        support = oracle.distribution(x, rubric.label(x))[0][1]  # type: ignore[attr-defined]
        assert len(support) >= 1
        for x_prime in support[:25]:
            assert verifier.check_sync(Challenge(1), x, x_prime).passed
            assert verifier.check_sync(Challenge(2), x, x_prime).passed


async def test_an_oracle_that_ignores_the_substring_reading_is_caught():
    """Why the oracle must know S_x: matching C̄ of the whole string fails eq. (2) over substrings."""
    verifier = RuleVerifier(IP_RUBRIC, subsets="substrings")
    whole = ComposedEvaluator(RubricLabeller(IP_RUBRIC), OracleGenerator(IP_RUBRIC, subsets="whole"))
    run = await no_data_algorithm(XS, whole, verifier, NoDataParams(rounds=3))
    assert run.success_rate < 0.95


def _liars() -> list[tuple[str, Any]]:
    return [
        ("lie-sigma", LieSigmaGenerator(IP_RUBRIC)),
        ("lie-sigma-permutation", LieSigmaGenerator(IP_RUBRIC, "permutation")),
        ("lie-f", LieFGenerator(IP_RUBRIC)),
        ("lie-p=0.1", LieApproxGenerator(IP_RUBRIC, 0.1)),
        ("lie-p=0.25", LieApproxGenerator(IP_RUBRIC, 0.25)),
        ("random", RandomGenerator()),
    ]


@pytest.mark.parametrize("verifier_rubric", [IP_RUBRIC, OOP_RUBRIC], ids=["ip", "oop"])
@pytest.mark.parametrize(("name", "generator"), _liars(), ids=[n for n, _ in _liars()])
async def test_each_lie_fails_at_its_expected_rate(name, generator, verifier_rubric):
    """Measured EV success over 1,200 datapoints vs the exact rate from the liar's distribution."""
    verifier = RuleVerifier(verifier_rubric)
    labeller = RubricLabeller(IP_RUBRIC)  # the evaluator knows (only) the IP rubric, as in §8
    xs = XS * 3
    run = await no_data_algorithm(
        xs, ComposedEvaluator(labeller, generator), verifier, NoDataParams(rounds=3, phi=0.0, seed=7)
    )
    expected = sum(
        round_pass_probability(x, generator.distribution(x, IP_RUBRIC.label(x)), verifier) ** 3 for x in xs
    ) / len(xs)
    assert within(run.success_rate, expected, len(xs)), (name, run.success_rate, expected)
    if verifier_rubric is OOP_RUBRIC or name not in ("lie-p=0.1", "lie-sigma"):
        assert run.success_rate < 0.6  # every lie is caught on most datapoints
    if verifier_rubric is IP_RUBRIC and name == "lie-sigma":
        # §8.1.1's Lie 1 always passes Challenge 2 (it outputs C(x)): at least (1/2)^3 = 12.5%, in fact ~65%.
        assert run.success_rate > 0.5


async def test_lie_1_outputs_c_of_x_as_the_paper_words_it_and_permutes_it_as_the_notebook():
    """§8.1.1: Lie 1 "can output an encoding C(x), but does not necessarily know C̄(x)" (the default, also of
    ``make_generator``); the notebook's variant only gets C(x) up to a permutation."""
    paper, notebook = make_generator("lie-sigma", IP_RUBRIC), LieSigmaGenerator(IP_RUBRIC, "permutation")
    assert paper.mode == "encoding"  # type: ignore[attr-defined]
    rng = np.random.default_rng(0)
    moved = 0
    for x in XS[:60]:
        for _ in range(5):
            x_prime = (await paper.propose(x, 1, 0, rng)).x_prime
            assert IP_RUBRIC.evaluate(x_prime) == IP_RUBRIC.evaluate(x)
        support = notebook.distribution(x, 1)[0][1]
        assert all(sorted(IP_RUBRIC.evaluate(s)) == sorted(IP_RUBRIC.evaluate(x)) for s in support)
        moved += any(IP_RUBRIC.evaluate(s) != IP_RUBRIC.evaluate(x) for s in support)
    assert moved > 30  # the notebook's liar usually gets the criteria themselves wrong
    with pytest.raises(ValueError, match="Lie 1 mode"):
        LieSigmaGenerator(IP_RUBRIC, "count")  # type: ignore[arg-type]


async def test_challenge_2_cheater_survives_half_of_the_rounds():
    """A.3's cheat (C(x') = C(x), C̄(x') ≠ C̄(x)) passes exactly the rounds that draw Challenge 2."""
    evaluator = ComposedEvaluator(RubricLabeller(IP_RUBRIC), Challenge2Cheater(IP_RUBRIC))
    xs = XS * 3
    run = await no_data_algorithm(xs, evaluator, RuleVerifier(IP_RUBRIC), NoDataParams(rounds=3, seed=3))
    assert within(run.success_rate, 0.5**3, len(xs))
    rounds = Counter(d.rounds_run for d in run.decisions)
    assert within(rounds[1] / len(xs), 0.5, len(xs))


async def test_first_failure_ends_the_session_and_reveals_the_label():
    class FailSecond:
        name = "fail-second"

        async def propose(self, x, y_hat, round, rng):
            return Proposal(x_prime=x if round == 0 else "1" * len(x), y_tilde=0 if round else y_hat)

    evaluator = ComposedEvaluator(ScriptedLabeller(lambda x: 1), FailSecond())
    found = await steps(["000000000000"], evaluator, RuleVerifier(OOP_RUBRIC), rounds=5, phi=0.0)
    rounds = [e.data for e in found if e.name == ROUND_STEP]
    (decision,) = [e.data for e in found if e.name == DECISION_STEP]
    assert [d["passed"] for d in rounds] == [True, False]
    # §6.1.2: the failed round's ỹ' is revealed; φ = 0 keeps it.
    assert not decision["success"] and decision["rounds_run"] == 2 and decision["revealed"] == 0 == decision["label"]


@pytest.mark.parametrize("phi", [0.0, 1.0])
async def test_phi_edge_cases(phi):
    evaluator = ComposedEvaluator(RubricLabeller(IP_RUBRIC), LieApproxGenerator(IP_RUBRIC, 0.3))
    run = await no_data_algorithm(XS, evaluator, RuleVerifier(IP_RUBRIC), NoDataParams(rounds=3, phi=phi))
    failed = [d for d in run.decisions if not d.success]
    assert 0 < len(failed) < len(XS)
    if phi == 0.0:
        assert run.flip_rate == 0.0 and run.predictions == run.revealed
    else:
        assert all(d.flipped and d.label == 1 - d.revealed for d in failed)
        assert run.flip_rate == pytest.approx(len(failed) / len(XS))
    assert all(not d.flipped and d.label == d.revealed for d in run.decisions if d.success)


async def test_flip_rate_is_phi_times_the_failure_rate():
    evaluator = ComposedEvaluator(RubricLabeller(IP_RUBRIC), RandomGenerator())
    run = await no_data_algorithm(XS * 3, evaluator, RuleVerifier(IP_RUBRIC), NoDataParams(rounds=3, phi=0.6))
    failed = sum(1 for d in run.decisions if not d.success)
    assert within(sum(run.flips) / failed, 0.6, failed)


def test_flip_decision_rejects_non_binary_labels():
    with pytest.raises(ValueError, match="binarise"):
        flip_decision(False, 3, 0.5, np.random.default_rng(0))
    assert flip_decision(True, 3, 1.0, np.random.default_rng(0)) == (3, False)


async def test_every_round_is_a_step():
    evaluator = ComposedEvaluator(RubricLabeller(IP_RUBRIC), LieSigmaGenerator(IP_RUBRIC))
    verifier = RuleVerifier(IP_RUBRIC)
    run = await no_data_algorithm(XS[:100], evaluator, verifier, NoDataParams(rounds=3, phi=0.5))
    found = await steps(XS[:100], evaluator, verifier)
    rounds = [e.data for e in found if e.name == ROUND_STEP]
    decisions = [e.data for e in found if e.name == DECISION_STEP]
    assert len(rounds) == sum(d.rounds_run for d in run.decisions)
    assert [d["index"] for d in decisions] == list(range(100))
    for d in rounds:
        assert {"x", "x_prime", "y_hat", "y_tilde", "challenge", "passed", "reason"} <= d.keys()
        assert d["challenge"] in (1, 2) and len(d["x_prime"]) == 12
        assert d["passed"] == (d["reason"] == "")
    by_index = {i: [d for d in rounds if d["index"] == i] for i in range(100)}
    for dec in decisions:
        mine = by_index[dec["index"]]
        assert [d["round"] for d in mine] == list(range(dec["rounds_run"]))
        assert all(d["passed"] for d in mine[:-1])
        assert mine[-1]["passed"] == dec["success"]
        assert dec["flipped"] == (dec["label"] != dec["revealed"])


async def test_results_depend_only_on_the_seed():
    evaluator = ComposedEvaluator(RubricLabeller(IP_RUBRIC), LieApproxGenerator(IP_RUBRIC, 0.3))
    verifier = RuleVerifier(IP_RUBRIC)
    a = await no_data_algorithm(XS, evaluator, verifier, NoDataParams(seed=11, phi=0.5))
    b = await no_data_algorithm(XS[::-1], evaluator, verifier, NoDataParams(seed=11, phi=0.5))
    c = await no_data_algorithm(XS, evaluator, verifier, NoDataParams(seed=12, phi=0.5))
    # A datapoint's coins depend on the seed and its row only: the same row in another order gets the same.
    assert a.decisions[3] == b.decisions[len(XS) - 1 - 3].model_copy(update={"index": 3})
    assert a.decisions != c.decisions
    # Each player's stream is its own: the evaluator's, the verifier's and the flip's draws differ.
    draws = {player: coins(11, 3, 0, player).random() for player in ("evaluator", "verifier", "flip", "generator")}
    assert len(set(draws.values())) == 4 and coins(11, 3, 0, "flip").random() == draws["flip"]


async def test_k_ary_run():
    """App. C.2 with a 4-ary σ (number of satisfied criteria): k - 1 = 3 binary runs, decoded back."""
    rubric = IP_RUBRIC.with_aggregator(CountAggregator(3), "ip-count")
    labels = rubric.labels
    run = await no_data_k_ary(
        XS[:120],
        RubricLabeller(rubric),
        lambda positive: OracleGenerator(rubric),
        RuleVerifier(rubric),
        labels,
        NoDataParams(rounds=3, phi=1.0),
    )
    assert len(run.runs) == len(labels) - 1
    assert [[d.run for d in r.decisions][:1] for r in run.runs] == [[0], [1], [2]]
    assert run.labels == [rubric.label(x) for x in XS[:120]]
    assert run.success_rate == 1.0
    # A liar is caught in every binary run; labels of failed datapoints are flipped (φ = 1) before decoding.
    liar = await no_data_k_ary(
        XS[:120],
        RubricLabeller(rubric),
        lambda positive: RandomGenerator(),
        RuleVerifier(rubric),
        labels,
        NoDataParams(rounds=3, phi=1.0),
    )
    assert liar.success_rate < 0.05
    assert set(liar.labels) <= set(labels)
    assert all(d.flipped for r in liar.runs for d in r.decisions if not d.success)


def test_all_twelve_bit_strings_have_an_oracle_match():
    gen = OracleGenerator(IP_RUBRIC)
    all12 = ["".join(b) for b in itertools.product("01", repeat=12)]
    for x in all12[::97]:
        support = gen.distribution(x, 0)[0][1]
        assert x in support
        assert all(IP_RUBRIC.evaluate_total(s) == IP_RUBRIC.evaluate_total(x) for s in support)
