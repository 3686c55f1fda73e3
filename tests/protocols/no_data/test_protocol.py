"""NoDataProtocol through run_protocol: every round and flip in the transcript, the declared state machine, φ edge
cases, determinism, resume, and agreement with the in-memory batch runs (scripted and decision-tree evaluators)."""

from __future__ import annotations

import json
import math
import random
import re
from pathlib import Path

import numpy as np
import pytest

from voirdire.models import Script, ScriptedChatCompletionClient, ScriptRule
from voirdire.protocols.no_data.algorithm import NoDataParams
from voirdire.protocols.no_data.challenges import RuleVerifier
from voirdire.protocols.no_data.data import Datapoint, Dataset, resolve_dataset
from voirdire.protocols.no_data.evaluators import ComposedEvaluator, RubricLabeller
from voirdire.protocols.no_data.experiments import ExperimentConfig, no_data_algorithm, run_experiment
from voirdire.protocols.no_data.generators import LieApproxGenerator, OracleGenerator, RandomGenerator
from voirdire.protocols.no_data.protocol import NoDataItem, NoDataProtocol, NoDataProtocolParams, make_items
from voirdire.protocols.no_data.report import decision_of, score_run
from voirdire.protocols.no_data.rubric import IP_RUBRIC, OOP_RUBRIC
from voirdire.protocols.no_data.theory import round_pass_probability
from voirdire.runner import run_protocol
from voirdire.session.machine import UndeclaredTransition
from voirdire.session.prompts import library
from voirdire.session.protocol import Session
from voirdire.transcript import MemoryWriter, Message, Step, Transition, load

rng = np.random.default_rng(99)
XS = ["".join(map(str, rng.integers(0, 2, 12))) for _ in range(240)]


def dataset(rubric=IP_RUBRIC, n: int = 40) -> Dataset:
    rows = [Datapoint(x=x, y=rubric.label(x)) for x in XS[:n]]
    return Dataset(name="synthetic", path="<synthetic>", rows=rows, rubric_name=rubric.name)


def protocol(evaluator, rubric="ip", **params) -> NoDataProtocol:
    return NoDataProtocol(NoDataProtocolParams(data=rubric, **params), evaluator=evaluator)


def within(observed: float, expected: float, n: int, z: float = 4.5) -> bool:
    return abs(observed - expected) <= z * math.sqrt(max(expected * (1 - expected), 1e-12) / n) + 1.0 / n


async def test_transcript_holds_every_round_and_the_flip(tmp_path: Path) -> None:
    """x', ỹ', the challenge drawn, the check outcome per round, and the flip per datapoint."""
    liar = ComposedEvaluator(RubricLabeller(IP_RUBRIC), LieApproxGenerator(IP_RUBRIC, 0.4))
    proto = protocol(liar, rounds=3, phi=0.5)
    items = make_items(dataset(), [5])
    out = tmp_path / "t.jsonl"
    result = await run_protocol(proto, items, out=out)
    assert not result.errors and len(result.verdicts) == len(items)
    t = load(out)
    assert t.header is not None and t.header.protocol == "no_data" and set(t.header.roles) == set()
    outcomes = {"passed": 0, "failed": 0, "flipped": 0}
    for item in items:
        s = t.sessions[proto.item_id(item)]
        steps = s.of_kind(Step)
        rounds = [e.data for e in steps if e.name == "nodata.round"]
        (decision,) = [e.data for e in steps if e.name == "nodata.decision"]
        assert len(rounds) == decision["rounds_run"] >= 1
        assert [r["round"] for r in rounds] == list(range(len(rounds)))
        for r in rounds:
            assert r["x"] == item.x and len(r["x_prime"]) == 12 and r["y_tilde"] in (0, 1)
            assert r["challenge"] in (1, 2) and r["passed"] == (r["reason"] == "")
        assert all(r["passed"] for r in rounds[:-1]) and rounds[-1]["passed"] == decision["success"]
        assert decision["revealed"] == rounds[-1]["y_tilde"]
        assert decision["flipped"] == (decision["label"] != decision["revealed"])
        assert not (decision["success"] and decision["flipped"])
        # The exchange went through the Session: the evaluator's commitment (x', never the label: no challenge
        # reads it, §6.1) to the verifier, and the verifier's answer announcing its challenge and the outcome.
        messages = s.of_kind(Message)
        to_verifier = [m for m in messages if m.receiver == "verifier"]
        from_verifier = [m for m in messages if m.sender == "verifier"]
        assert len(to_verifier) == len(from_verifier) == len(rounds)
        for m, answer, r in zip(to_verifier, from_verifier, rounds, strict=True):
            request = json.loads(m.content)
            assert m.sender == "evaluator" and request == {
                "op": "commit",
                "round": r["round"],
                "x": item.x,
                "x_prime": r["x_prime"],
            }
            assert "challenge" not in request and "y_tilde" not in request
            reply = json.loads(answer.content)
            assert (reply["challenge"], reply["challenge_name"], reply["passed"], reply["reason"]) == (
                r["challenge"],
                r["challenge_name"],
                r["passed"],
                r["reason"],
            )
        # Only the verifier names a challenge.
        assert all("challenge" not in m.content for m in messages if m.sender != "verifier")
        proposals = [json.loads(m.content) for m in messages if m.sender == "evaluator" and "x_prime" in m.content]
        assert [p["x_prime"] for p in proposals if "op" not in p] == [r["x_prime"] for r in rounds]
        states = [e.to_state for e in s.of_kind(Transition)]
        assert states == ["label", "propose", "challenge"] * len(rounds) + ["decision", "done"]
        v = s.verdict
        assert v is not None and v.decision == f"label {decision['label']}" and v.accepted == decision["success"]
        assert v.statistics["flipped"] == decision["flipped"] and v.statistics["reference"] == item.y
        assert len(v.evidence) == len(rounds)
        outcomes["passed" if decision["success"] else "failed"] += 1
        outcomes["flipped"] += decision["flipped"]
    assert outcomes["passed"] and outcomes["failed"] and outcomes["flipped"]  # the test sees every branch


@pytest.mark.parametrize("rubric", [IP_RUBRIC, OOP_RUBRIC], ids=["ip", "oop"])
async def test_honest_evaluator_always_passes_through_the_protocol(tmp_path: Path, rubric) -> None:
    honest = ComposedEvaluator(RubricLabeller(rubric), OracleGenerator(rubric))
    items = make_items(dataset(rubric), [0, 1])
    proto = protocol(honest, rubric.name, rounds=4, phi=1.0)
    result = await run_protocol(proto, items, out=tmp_path / "h.jsonl")
    assert all(v.accepted for v in result.verdicts.values()) and len(result.verdicts) == len(items)
    assert all(v.statistics["rounds_run"] == 4 and not v.statistics["flipped"] for v in result.verdicts.values())
    (s0, s1) = score_run(proto, items, result.verdicts)
    assert s0.accuracy == s1.accuracy == 1.0 and s0.success_rate == 1.0 and s0.flip_rate == 0.0


@pytest.mark.parametrize("phi", [0.0, 1.0])
async def test_phi_edge_cases_through_the_protocol(tmp_path: Path, phi: float) -> None:
    liar = ComposedEvaluator(RubricLabeller(IP_RUBRIC), LieApproxGenerator(IP_RUBRIC, 0.3))
    items = make_items(dataset(n=80), [3])
    result = await run_protocol(protocol(liar, phi=phi), items, out=tmp_path / "phi.jsonl")
    decisions = [decision_of(v) for v in result.verdicts.values()]
    failed = [d for d in decisions if not d.success]
    assert 0 < len(failed) < len(decisions)
    if phi == 0.0:
        assert not any(d.flipped for d in decisions) and all(d.label == d.revealed for d in decisions)
    else:
        assert all(d.flipped and d.label == 1 - d.revealed for d in failed)
    assert all(not d.flipped for d in decisions if d.success)


async def test_a_lie_fails_at_its_expected_rate_through_the_protocol(tmp_path: Path) -> None:
    generator = LieApproxGenerator(IP_RUBRIC, 0.5)
    liar = ComposedEvaluator(RubricLabeller(IP_RUBRIC), generator)
    data = dataset(n=240)
    items = make_items(data, [1])
    result = await run_protocol(protocol(liar, phi=0.0), items, out=tmp_path / "lie.jsonl")
    measured = sum(v.accepted for v in result.verdicts.values()) / len(items)
    verifier = RuleVerifier(IP_RUBRIC)
    expected = sum(
        round_pass_probability(x, generator.distribution(x, IP_RUBRIC.label(x)), verifier) ** 3 for x in data.xs
    ) / len(data.xs)
    assert 0.05 < expected < 0.6
    assert within(measured, expected, len(items)), (measured, expected)


async def test_sessions_equal_the_batch_run_and_ignore_order_and_concurrency(tmp_path: Path) -> None:
    liar = ComposedEvaluator(RubricLabeller(IP_RUBRIC), LieApproxGenerator(IP_RUBRIC, 0.3))
    data = dataset(n=60)
    items = make_items(data, [7])
    shuffled = items[:]
    random.Random(0).shuffle(shuffled)
    a = await run_protocol(protocol(liar, phi=0.5), items, out=tmp_path / "a.jsonl")
    b = await run_protocol(protocol(liar, phi=0.5), shuffled, out=tmp_path / "b.jsonl", concurrency=8)
    direct = await no_data_algorithm(data.xs, liar, RuleVerifier(IP_RUBRIC), NoDataParams(rounds=3, phi=0.5, seed=7))
    for item, expected in zip(items, direct.decisions, strict=True):
        sid = f"seed7-{item.index:02d}"
        assert decision_of(a.verdicts[sid]) == expected == decision_of(b.verdicts[sid])
    other = await run_protocol(protocol(liar, phi=0.5), make_items(data, [8]), out=tmp_path / "c.jsonl")
    assert [decision_of(v) for v in other.verdicts.values()] != direct.decisions


async def test_resume_skips_finished_sessions_and_adds_seeds(tmp_path: Path) -> None:
    liar = ComposedEvaluator(RubricLabeller(IP_RUBRIC), RandomGenerator())
    data = dataset(n=20)
    out = tmp_path / "r.jsonl"
    first = await run_protocol(protocol(liar), make_items(data, [0], limit=8), out=out)
    assert len(first.verdicts) == 8 and first.skipped == 0
    again = await run_protocol(protocol(liar), make_items(data, [0, 1]), out=out)
    assert again.skipped == 8 and len(again.verdicts) == 40
    fresh = await run_protocol(protocol(liar), make_items(data, [0, 1]), out=tmp_path / "f.jsonl")
    assert {k: decision_of(v) for k, v in again.verdicts.items()} == {
        k: decision_of(v) for k, v in fresh.verdicts.items()
    }
    assert len(load(out).sessions) == 40


def test_params_validation(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="generator 'llm' needs evaluator 'llm'"):
        NoDataProtocolParams(generator="llm")
    with pytest.raises(ValueError, match="epsilon"):
        NoDataProtocolParams(epsilon=0.7)
    with pytest.raises(ValueError, match="needs an evaluator object"):
        NoDataProtocol(NoDataProtocolParams(evaluator="scripted"))
    other = tmp_path / "other_file.json"
    other.write_text("[]")
    with pytest.raises(ValueError, match="is a data file: give its verifier rubric"):
        NoDataProtocolParams(data=str(other))  # no rubric guessed from the name
    with pytest.raises(ValueError, match="is a data file: give its verifier rubric"):
        ExperimentConfig(data=str(other))
    with pytest.raises(ValueError, match=re.escape("some/missing.json: data file not found")):
        NoDataProtocolParams(data="some/missing.json", rubric="ip")
    with pytest.raises(
        ValueError, match=re.escape("'ipp' is neither a built-in data set (ip, oop) nor a file (did you mean 'ip'?)")
    ):
        NoDataProtocolParams(data="ipp")
    assert NoDataProtocolParams(data=str(other), rubric="ip").rubric_name == "ip"
    assert NoDataProtocolParams(data="oop", rubric="ip").rubric_name == "ip"
    assert NoDataProtocol(NoDataProtocolParams(evaluator="llm", generator="lie-f")).required_roles() == (
        "evaluator",
        "verifier",
        "generator",
    )


def test_items_keep_their_row_index_under_offset_and_limit() -> None:
    items = make_items(dataset(n=30), [2, 3], offset=10, limit=5)
    assert [it.id for it in items[:2]] == ["seed2-10", "seed2-11"] and items[5].id == "seed3-10"
    assert [it.index for it in items[:5]] == list(range(10, 15)) and {it.seed for it in items} == {2, 3}


# ----------------------------------------------------------------------------------------- the §8 decision tree


@pytest.mark.parametrize(("generator", "noise"), [("oracle", 0.0), ("lie-sigma", 0.1), ("lie-f", 0.0), ("lie-p", 0.1)])
async def test_decision_tree_sessions_equal_run_experiment(shared_data, tmp_path: Path, generator, noise) -> None:
    """A transcript run and the in-memory batch run of the same parameters: same seed, same numbers."""
    root = shared_data / "no_data_algorithm"
    data = resolve_dataset("oop", root=root)
    data = data.model_copy(update={"rows": data.rows[:70]})
    params = NoDataProtocolParams(data="oop", generator=generator, label_noise=noise, phi=0.6)
    proto = NoDataProtocol(params, root=root)
    items = make_items(data, [4])
    result = await run_protocol(proto, items, out=tmp_path / "dt.jsonl")
    config = ExperimentConfig(data="oop", generator=generator, label_noise=noise, phi=0.6, seed=4)
    direct = await run_experiment(config, dataset=data, root=root)
    (ours,) = score_run(proto, items, result.verdicts)
    for metric in ("accuracy", "f1", "success_rate", "flip_rate", "revealed_accuracy", "known_accuracy"):
        assert getattr(ours, metric) == getattr(direct, metric), metric
    assert ours.theory == direct.theory
    assert ours.success_rate < 0.5  # OOP: the IP-rubric generator is caught, so the test is not vacuous


def test_machine_declares_the_ev_rounds_and_refuses_other_edges() -> None:
    """A round is label -> propose -> challenge; then the next round (its label, or its proposal when the LLM
    labels once) or Alg. 1's decision, then done. Anything else is a protocol bug the Session refuses."""
    machine = NoDataProtocol.machine
    assert machine.initial == ("label",) and NoDataProtocol().states == (
        "label",
        "propose",
        "challenge",
        "decision",
        "done",
    )
    assert machine.edges["challenge"] == ("label", "propose", "decision") and machine.edges["done"] == ()
    session = Session(
        run_id="r", session_id="s", protocol=NoDataProtocol(), agents={}, writer=MemoryWriter(), prompts=library()
    )
    with pytest.raises(UndeclaredTransition, match="start -> propose"):
        session.enter("propose")
    session.enter("label")
    for wrong in ("challenge", "decision", "done", "label"):
        with pytest.raises(UndeclaredTransition, match=f"label -> {wrong} is not a declared transition"):
            session.enter(wrong)
    session.enter("propose")
    session.enter("challenge")
    with pytest.raises(UndeclaredTransition, match="challenge -> done"):
        session.enter("done")


async def test_label_once_goes_from_a_challenge_to_the_next_proposal(shared_data: Path, tmp_path: Path) -> None:
    client = ScriptedChatCompletionClient(
        Script(
            rules=[
                ScriptRule(match=r"Label: [01]\s*$", reply="|datapoint|\n000000000000\n|datapoint|"),
                ScriptRule(match=r"Datapoint: [01]+\s*$", reply="|label|\n1\n|label|"),
            ]
        )
    )
    params = NoDataProtocolParams(evaluator="llm", relabel_each_round=False, rounds=3, exemplars=0)
    item = NoDataItem(index=0, x="000000000000")
    proto = NoDataProtocol(params, root=shared_data / "no_data_algorithm")  # the LLM's pool: the IP train split
    out = tmp_path / "once.jsonl"
    result = await run_protocol(proto, [item], out=out, clients={"evaluator": client})
    assert not result.errors
    (s,) = load(out).sessions.values()
    states = [e.to_state for e in s.of_kind(Transition)]
    assert states == [
        "label",
        "propose",
        "challenge",
        "propose",
        "challenge",
        "propose",
        "challenge",
        "decision",
        "done",
    ]
    assert [m.prompt for m in s.of_kind(Message) if m.sender == "moderator"].count("no_data/evaluate") == 1
