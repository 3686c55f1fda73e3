"""Any role swaps by flag: autogen's OpenAI client against a fake OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fake_openai import FakeOpenAIServer
from voirdire.cli import main
from voirdire.models import RoleSettings
from voirdire.protocols.cross_examination import ClaimItem, CrossExamination
from voirdire.runner import run_protocol
from voirdire.transcript import ModelCall, load


def examiner_replies(messages: list[dict[str, Any]]) -> str:
    last = messages[-1]["content"]
    if "verify the correctness" in last:
        return "1. In which country is Asmara?\n2. Is Asmara the seat of government?"
    if "follow-up questions? Please answer with Yes or No" in last:
        return "No"
    if "correct or incorrect" in last:
        return "Based on the answers, the claim is correct."
    return "?"


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "examinee.yaml"
    path.write_text("rules:\n  - match: regarding your claim\n    reply: Asmara is the capital of Eritrea.\n")
    return path


def test_cli_binds_the_examiner_to_an_openai_compatible_endpoint(tmp_path: Path, script: Path, capsys) -> None:
    out = tmp_path / "t.jsonl"
    with FakeOpenAIServer(examiner_replies) as server:
        code = main(
            [
                "examine",
                "The capital of Eritrea is Asmara.",
                "--answer",
                "Asmara",
                "--model",
                f"examiner=openai-compatible:fake-model@{server.url}",
                "--model",
                f"examinee=scripted:{script}",
                "--max-tokens",
                "64",
                "--out",
                str(out),
                "--json",
            ]
        )
    assert code == 0
    payload = json.loads(capsys.readouterr().out)
    ((sid, verdict),) = payload["verdicts"].items()
    assert verdict["decision"] == "correct"
    # The examiner really went over HTTP: setup, follow-up ask, decision, each bounded by max_tokens.
    assert len(server.requests) == 3
    assert all(r["model"] == "fake-model" and r["max_tokens"] == 64 for r in server.requests)
    assert server.requests[0]["messages"][0]["content"].startswith("Your goal is to try to verify")
    # Multi-turn: the decision request carries the whole examiner conversation.
    assert len(server.requests[-1]["messages"]) == 5
    t = load(out)
    calls = t.sessions[sid].of_kind(ModelCall)
    assert {c.model for c in calls if c.role == "examiner"} == {f"openai-compatible:fake-model@{server.url}"}
    assert {c.model for c in calls if c.role == "examinee"} == {f"scripted:{script}"}
    assert t.header is not None and t.header.roles["examiner"].spec.startswith("openai-compatible:fake-model@")


async def test_transient_server_errors_are_retried_and_counted(tmp_path: Path, script: Path) -> None:
    out = tmp_path / "t.jsonl"
    with FakeOpenAIServer(examiner_replies, fail_first=2) as server:
        roles = {
            "examiner": RoleSettings(model=f"openai-compatible:fake@{server.url}", max_tokens=32),
            "examinee": RoleSettings(model=f"scripted:{script}"),
        }
        result = await run_protocol(CrossExamination(), [ClaimItem(id="c", claim="X is Y.")], out=out, roles=roles)
    assert not result.errors and result.verdicts["c"].accepted is True
    first_call = load(out).sessions["c"].of_kind(ModelCall)[0]
    assert first_call.role == "examiner" and first_call.retries == 2
    assert len(server.requests) == 2 + 3


def test_credentials_in_the_url_are_refused_and_a_query_key_never_reaches_the_transcript(
    tmp_path: Path, script: Path, capsys
) -> None:
    out = tmp_path / "t.jsonl"
    with FakeOpenAIServer(examiner_replies) as server:
        with_user = server.url.replace("http://", "http://user:hunter2@")
        examinee = ["--model", f"examinee=scripted:{script}", "--out", str(out), "--json"]
        assert main(["examine", "X is Y.", "--model", f"examiner=openai-compatible:m@{with_user}", *examinee]) == 2
        err = capsys.readouterr().err
        assert "carries credentials" in err and "hunter2" not in err and not out.exists()
        with_query = f"{server.url}?api_key=hunter2"
        code = main(["examine", "X is Y.", "--model", f"examiner=openai-compatible:m@{with_query}", *examinee])
        assert code in (0, 3)
    captured = capsys.readouterr()
    assert "hunter2" not in out.read_text() + captured.out + captured.err
