"""``voirdire check-entities`` through the registry, against scripted clients and an OpenAI-compatible fake."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fake_openai import FakeOpenAIServer
from voirdire.cli import main
from voirdire.registry.plugins import get
from voirdire.transcript import load

from .oracles import SENTENCE, SYNONYMS, linear, listing, sentence_of

EXTRACT = "Please perform entity recognition"


def respond(messages: list[dict[str, Any]]) -> str:
    user = messages[-1]["content"]
    if user.startswith(EXTRACT):
        return listing(linear(sentence_of(user)))
    for entity, syns in SYNONYMS.items():
        if f'"{entity}" in the sentence' in user:
            return "\n".join(f"{i}. {c}" for i, c in enumerate(syns, 1))
    return "[[named entity]]"


def test_registered_with_its_command() -> None:
    reg = get("oracle_entities")
    assert reg.cli.command == "check-entities" and reg.protocol.roles == ("oracle", "checker")


@pytest.mark.parametrize("honour_n", [True, False])
def test_requests_per_sentence_against_a_fake_endpoint(
    honour_n: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """k = 11 samples of one query are one request with n = 11 where the endpoint returns n choices."""
    out = tmp_path / "t.jsonl"
    with FakeOpenAIServer(respond, honour_n=honour_n) as server:
        args = ["check-entities", SENTENCE, "--model", f"openai-compatible:fake@{server.url}", "--out", str(out)]
        rc = main([*args, "--no-progress", "--json"])
        bodies = list(server.requests)
    assert rc == 0
    result = json.loads(capsys.readouterr().out)
    (verdict,) = result["verdicts"].values()
    assert verdict["decision"] == "accepted"
    extraction = [b for b in bodies if b["messages"][-1]["content"].startswith(EXTRACT)]
    synonym = [b for b in bodies if not b["messages"][-1]["content"].startswith(EXTRACT)]
    print(f"honour_n={honour_n}: {len(extraction)} extraction requests, {len(synonym)} synonym requests")
    if honour_n:
        assert len(extraction) == 1 + 15 and len(synonym) == 3
        assert {b.get("n") for b in extraction} == {11}
    else:  # one request per sample once the endpoint is seen to return one choice
        assert len(extraction) == 11 * 16 and len(synonym) == 3 * 7  # 11 for s, the paper's 165 for the tests
    t = load(out)
    assert t.sessions[next(iter(t.sessions))].verdict.statistics["a_test"] == 5  # type: ignore[union-attr]


def test_python_api_checks_one_sentence(tmp_path: Path) -> None:
    from voirdire.protocols.oracle_checker import check_entities

    from .oracles import linear, oracle

    verdict = check_entities(SENTENCE, clients={"oracle": oracle(linear)}, out=tmp_path / "t.jsonl", samples=2, tests=2)
    assert verdict.accepted is True and verdict.statistics["tests"] == 2


def test_check_paraphrase_command_with_a_scripted_oracle(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def decide(messages: list[dict[str, Any]]) -> str:
        return json.dumps({"answer": "yes", "explanation": "same"})

    s1 = "The company said its quarterly profit rose sharply in the spring."
    s2 = "The company said on Monday that its quarterly profit rose sharply in the spring."
    with FakeOpenAIServer(decide) as server:
        args = ["check-paraphrase", s1, s2, "--embedder", "bag-of-words", "--out", str(tmp_path / "t.jsonl")]
        rc = main([*args, "--model", f"openai-compatible:fake@{server.url}", "--no-progress"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "Verdict: YES ACCEPTED" in out and "rho_12:" in out
    assert out.count("oracle: yes (same)") == 1  # the verdict's evidence once, in the chat, not again after it


def test_structured_mode_asks_prompts_1_to_4_through_their_schemas(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def respond_json(messages: list[dict[str, Any]]) -> str:
        user = messages[-1]["content"]
        if user.startswith(EXTRACT):
            return json.dumps({"entities": [{"type": c, "name": e} for c, e in linear(sentence_of(user))]})
        for entity, syns in SYNONYMS.items():
            if f'"{entity}" in the sentence' in user:
                return json.dumps({"candidates": syns})
        return json.dumps({"answer": "named entity"})

    with FakeOpenAIServer(respond_json) as server:
        args = ["check-entities", SENTENCE, "--structured", "--samples", "3", "--tests", "2"]
        rc = main([*args, "--model", f"openai-compatible:fake@{server.url}", "--out", str(tmp_path / "t.jsonl"),
                   "--no-progress", "--json"])  # fmt: skip
        formats = {b.get("response_format", {}).get("type") for b in server.requests}
    assert rc == 0 and formats == {"json_schema"}
    (verdict,) = json.loads(capsys.readouterr().out)["verdicts"].values()
    assert verdict["decision"] == "accepted" and verdict["statistics"]["a_test"] == 2
