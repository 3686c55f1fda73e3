"""The oracle-checker's closed answers through the core reader: Prompts 5-6 (yes/no) and Prompt 2 (named/normal),
and the No-checker's test queries, where an unreadable answer is an abstention, never a "no"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voirdire.protocols.oracle_checker.entities import parse_named
from voirdire.protocols.oracle_checker.paraphrase import PairItem, ParaphraseChecker, ParaphraseParams, read_yes_no
from voirdire.runner import run_protocol
from voirdire.session.protocol import ParseError
from voirdire.transcript import load

from .oracles import FunctionClient

S1 = "The company said its quarterly profit rose sharply in the spring."
S2 = "The company said on Monday that its quarterly profit rose sharply in the spring."
NO = json.dumps({"answer": "no", "explanation": "different"})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("No doubt about it: the two sentences say the same thing.", "yes"),  # a first-word reader said "no"
        ('{"answer": "Yes and no"}', None),  # a first-word reader said "yes"
        ('{"answer": "yes", "explanation": "Both say the bridge opened in 1932."}', "yes"),
        ('{"answer": "no", "explanation": "yes, they share words, but the meaning differs"}', "no"),
        ('```json\n{"answer": "No", "explanation": "Different numbers."}\n```', "no"),
        ("They are not paraphrases.", "no"),
        ("Absolutely not; the meanings differ.", "no"),
        ("Les deux phrases ont le même sens.", None),
        ('{"answer": "maybe"}', None),
    ],
)
def test_prompt_5_and_6_answers(text: str, expected: str | None) -> None:
    if expected is None:
        with pytest.raises(ParseError):
            read_yes_no(text)
    else:
        assert read_yes_no(text).answer == expected


def test_the_explanation_is_kept() -> None:
    assert read_yes_no('{"answer": "no", "explanation": "one adds a date"}').explanation == "one adds a date"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("A place. [[named entity]]", True),
        ("[[normal entity]]", False),
        ("[[Named Entity]]", True),
        ("[[not a named entity]]", False),  # "named" in it, but negated
        ("[[named or normal]]", None),
        ("[[entité nommée]]", None),
        ("named entity", None),
    ],
)
def test_prompt_2_named_or_normal(text: str, expected: bool | None) -> None:
    if expected is None:
        with pytest.raises(ParseError):
            parse_named(text)
    else:
        assert parse_named(text) is expected


def _oracle(tests: list[str]) -> FunctionClient:
    """Prompt 5 says "no" first, then answers the coin-toss test queries with ``tests`` in turn; Prompt 6 says no."""
    decided = {"n": 0}
    paraphrases = [S1.replace("spring", "early spring"), S2.replace("sharply", "steeply")]

    def reply(user: str) -> str:
        if user.startswith("Decide whether the following two sentences"):
            decided["n"] += 1
            return NO if decided["n"] == 1 else tests[min(decided["n"] - 2, len(tests) - 1)]
        if user.startswith("Decide whether the following two texts"):
            return NO
        if user.startswith("Generate five paraphrases"):
            return json.dumps({"paraphrases": paraphrases})
        raise AssertionError(user[:60])

    return FunctionClient(reply)


async def _run(tmp_path: Path, tests: list[str], no_tests: int):  # type: ignore[no-untyped-def]
    out = tmp_path / "t.jsonl"
    protocol = ParaphraseChecker(ParaphraseParams(embedder="bag-of-words", no_tests=no_tests))
    result = await run_protocol(protocol, [PairItem(id="p", sentence1=S1, sentence2=S2)], out=out,
                                clients={"oracle": _oracle(tests)})  # fmt: skip
    assert not result.errors, result.errors
    return load(out).sessions["p"].verdict


async def test_unreadable_test_answers_abstain(tmp_path: Path) -> None:
    """Fig. 4's test queries answered "Yes and no" or in French: no test is counted, the "no" stays untested."""
    v = await _run(tmp_path, ['{"answer": "Yes and no"}', "Oui, ce sont les mêmes."], no_tests=2)
    assert v.decision == "no untested" and v.accepted is None
    assert [t["answer"] for t in v.statistics["tests"]] == [None, None]


async def test_an_abstention_beside_a_readable_no(tmp_path: Path) -> None:
    v = await _run(tmp_path, ['{"answer": "Yes and no"}', NO], no_tests=2)
    assert v.decision == "no accepted"
    assert [t["answer"] for t in v.statistics["tests"]] == [None, "no"]
    assert any("in 1 test(s)" in e for e in v.evidence)
