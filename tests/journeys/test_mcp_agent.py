"""Journey (b): an agent, through the official MCP client, examines claims with ``voirdire mcp`` and reads them
back: three claims, one of them again, a restart of the server, a fourth claim. Every call is examined (a repeated
claim is a new session), all go to the one transcript the server names, and nothing is refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp", reason="the `mcp` extra is not installed")

SCRIPT = """\
rules:
  - match: "Your goal is to try to verify"
    reply: "1. Is that so?"
  - match: "regarding your claim"
    reply: "Yes, it is so."
  - match: "follow-up questions\\\\?"
    reply: "No"
  - match: "correct or incorrect"
    reply: "The claim is correct."
default: "I do not know."
"""
CLAIMS = ["The capital of Eritrea is Asmara.", "Oslo is in Norway.", "Lima is in Peru."]
FOURTH = "Quito is in Ecuador."


def _server(tmp_path: Path) -> Any:
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT, encoding="utf-8")
    (tmp_path / "runs").mkdir(exist_ok=True)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OPENAI_API_KEY": ""}
    return mcp.StdioServerParameters(
        command=sys.executable,
        args=["-m", "voirdire", "mcp", "--folder", str(tmp_path / "runs"), "--model", f"scripted:{script}"],
        env=env,
        cwd=str(tmp_path),
    )


def _text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def _payload(result: Any) -> Any:
    found = result.structured_content or json.loads(_text(result))
    return found["result"] if isinstance(found, dict) and set(found) == {"result"} else found


async def _examine(client: Any, claim: str) -> dict[str, Any]:
    answer = await client.call_tool("examine_claim", {"claim": claim})
    assert not answer.is_error, _text(answer)
    verdict: dict[str, Any] = _payload(answer)
    assert verdict["decision"] == "correct" and claim in verdict["chat"]
    return verdict


async def test_an_agent_examines_four_claims_across_a_restart_and_reads_them_back(tmp_path: Path) -> None:
    verdicts = []
    async with mcp.Client(_server(tmp_path)) as client:
        for claim in [*CLAIMS, CLAIMS[0]]:
            verdicts.append(await _examine(client, claim))
    async with mcp.Client(_server(tmp_path)) as client:  # a restart: the same transcript, appended to
        verdicts.append(await _examine(client, FOURTH))
        sessions = _payload(await client.call_tool("list_sessions", {}))
        shown = await client.call_tool("show_session", {"session_id": verdicts[3]["session_id"]})

    assert {v["transcript"] for v in verdicts} == {"examine-mcp.jsonl"}  # one transcript, named in each result
    ids = [v["session_id"] for v in verdicts]
    assert len(set(ids)) == 5  # the repeated claim was examined again, as a session of its own
    assert ids[3] != ids[0]
    assert [s["session_id"] for s in sessions] == ids
    assert [s["claim"] for s in sessions] == [*CLAIMS, CLAIMS[0], FOURTH]
    assert not shown.is_error and CLAIMS[0] in _text(shown) and "Is that so?" in _text(shown)

    from voirdire.transcript import load

    t = load(tmp_path / "runs" / "examine-mcp.jsonl")
    assert len(t.sessions) == 5 and all(s.verdict is not None for s in t.sessions.values())


async def test_the_server_names_its_transcript_caps_claims_and_stays_in_its_folder(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.jsonl"
    params = _server(tmp_path)
    t = tmp_path / "runs" / "examine-mcp.jsonl"

    # the startup line (stderr: stdout carries the protocol) names the transcript; stdin closed, the server ends
    started = subprocess.run([params.command, *params.args], input="", capture_output=True, text=True, timeout=120,
                             env=params.env, cwd=params.cwd)  # fmt: skip
    assert f"examinations go to {t}" in started.stderr
    async with mcp.Client(params) as client:
        big = await client.call_tool("examine_claim", {"claim": "x" * 20_001})
        assert big.is_error and "claim: 20,001 characters" in _text(big)
        assert not t.exists()  # refused before anything is written
        await _examine(client, CLAIMS[0])
        outside.write_bytes(t.read_bytes())  # a real transcript, outside the served folder
        (tmp_path / "runs" / "link.jsonl").symlink_to(outside)
        linked = await client.call_tool("report", {"run": "link.jsonl"})
        assert linked.is_error and "no run 'link.jsonl'" in _text(linked)
        listed = _payload(await client.call_tool("list_runs", {}))
        assert [r["run"] for r in listed] == ["examine-mcp.jsonl"]
