"""The linearity checker with scripted oracles (§3, §5.1): a linear extractor is accepted in every trial, an
extractor that drops an entity whenever another is replaced is rejected at least as often as Theorem 3.1-3.2
predict for its distance ε to the homomorphisms (computed by enumeration)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from voirdire.models import RoleSettings
from voirdire.protocols.oracle_checker import LinearityChecker, LinearityParams, SentenceItem
from voirdire.protocols.oracle_checker.entities import Entity, distance_to_linear, observe, replace
from voirdire.protocols.oracle_checker.theorems import rejection_bound
from voirdire.runner import run_in_memory, run_protocol
from voirdire.transcript import ModelCall, Step, load

from .oracles import ENTITIES, SENTENCE, SYNONYMS, dropping, dropping_when_both_named_replaced, linear, oracle

NAMES = [e for _, e in ENTITIES]
SYNS = [SYNONYMS[e][0] for e in NAMES]
TRIALS = 30


def table(extractor) -> dict:  # type: ignore[no-untyped-def]
    """f(v) = f_tk(R(v)) for every v, read as elements of G_2."""
    out = {}
    for v in itertools.product((0, 1), repeat=3):
        got = [Entity(text=e, cls=c) for c, e in extractor(replace(SENTENCE, NAMES, SYNS, v))]
        out[v] = observe(got, NAMES, SYNS)
    return out


async def trials(extractor, n: int = TRIALS) -> list[bool | None]:  # type: ignore[no-untyped-def]
    verdicts = []
    for seed in range(n):
        protocol = LinearityChecker(LinearityParams(samples=2, named_votes=1, synonym_votes=1, checker_seed=seed))
        got, _ = await run_in_memory(protocol, [SentenceItem(text=SENTENCE)], clients={"oracle": oracle(extractor)})
        verdicts.append(got[0].accepted)
    return verdicts


async def test_linear_extractor_is_accepted_in_every_trial() -> None:
    assert distance_to_linear(table(linear)) == 0
    assert await trials(linear) == [True] * TRIALS


@pytest.mark.parametrize(
    ("extractor", "epsilon"),
    [
        (dropping, 7 / 8),  # drops another entity whenever one is replaced: only f(0) is a group element
        (dropping_when_both_named_replaced, 1 / 4),  # wrong on v = (1, 1, *) only
    ],
)
async def test_dropping_extractor_is_rejected_at_least_as_theorem_3_1_predicts(extractor, epsilon) -> None:  # type: ignore[no-untyped-def]
    eps = distance_to_linear(table(extractor))
    assert eps == epsilon
    predicted = rejection_bound(5, eps)  # 7/8: 1 - (7/9)^5 ≈ 0.715; 1/4: 1 - (1 - 3/4 + 6/16)^5 ≈ 0.905
    verdicts = await trials(extractor)
    observed = verdicts.count(False) / len(verdicts)
    print(f"{extractor.__name__}: eps={eps}, predicted rejection >= {predicted:.3f}, observed {observed:.3f}")
    assert observed >= predicted


async def test_one_session_at_the_paper_settings(tmp_path: Path) -> None:
    """k = 11, n = 5, votes of 11 and 7: the transcript holds every oracle query and checker step."""
    client = oracle(linear)
    out = tmp_path / "t.jsonl"
    # The paper's votes sample (the CLI's oracle default is temperature 1.0): no request answers another.
    sampling = {"oracle": RoleSettings(temperature=1.0)}
    result = await run_protocol(LinearityChecker(), [SentenceItem(id="s1", text=SENTENCE)], out=out,
                                clients={"oracle": client}, roles=sampling)  # fmt: skip
    assert not result.errors
    t = load(out)
    s = t.sessions["s1"]
    v = s.verdict
    assert v is not None and v.accepted is True and v.decision == "accepted"
    assert v.statistics["a_test"] == 5 and v.statistics["con_o"] == 11 and v.statistics["con_rs"] == 11
    assert v.statistics["a_rate"] == 1.0 and v.statistics["synonyms"] == SYNS
    assert any("0.1-close" in e for e in v.evidence)
    steps = [e.name for e in s.events if isinstance(e, Step)]
    assert steps.count("linearity_test") == 5 and steps.count("synonym") == 3 and steps.count("named") == 3
    # 11 extractions of s, 3 synonym votes of 7, 15 R-sentences x 11 (Prompt 2 never asked: the rules decide)
    assert len(client.calls) == 11 + 3 * 7 + 15 * 11


async def test_greedy_oracle_requests_for_the_same_sentence_are_sent_once(tmp_path: Path) -> None:
    """At temperature 0 an R-transformed sentence met again in a later test is answered by the first request."""
    client = oracle(linear)
    out = tmp_path / "t.jsonl"
    result = await run_protocol(LinearityChecker(), [SentenceItem(id="s1", text=SENTENCE)], out=out,
                                clients={"oracle": client}, roles={"oracle": RoleSettings(temperature=0)})  # fmt: skip
    assert not result.errors
    calls = load(out).sessions["s1"].of_kind(ModelCall)
    coalesced = [c for c in calls if c.coalesced]
    assert coalesced and all(c.requests == 0 for c in coalesced)
    assert len({c.request_digest for c in calls if not c.coalesced}) == len([c for c in calls if not c.coalesced])
    assert len(client.calls) < 11 + 3 * 7 + 15 * 11
