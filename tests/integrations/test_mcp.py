"""`voirdire mcp` through the official SDK's own client over stdio: the four tools, errors as tool errors, and the
roles fixed by the server (a tool call cannot name a model)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp", reason="the `mcp` extra is not installed")

SCRIPT = """\
rules:
  - match: "Your goal is to try to verify"
    reply: "1. Is Asmara the capital of Eritrea?"
  - match: "regarding your claim"
    reply: "Yes, Asmara is the capital of Eritrea."
  - match: "follow-up questions\\\\?"
    reply: "No"
  - match: "correct or incorrect"
    reply: "The claim is correct."
default: "I do not know."
"""


def _server(tmp_path: Path) -> Any:
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT, encoding="utf-8")
    runs = tmp_path / "runs"
    runs.mkdir()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OPENAI_API_KEY": ""}
    return mcp.StdioServerParameters(
        command=sys.executable,
        args=["-m", "voirdire", "mcp", "--folder", str(runs), "--model", f"scripted:{script}"],
        env=env,
        cwd=str(tmp_path),
    )


def _text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def test_an_agent_examines_a_claim_and_reads_the_evidence(tmp_path: Path) -> None:
    async with mcp.Client(_server(tmp_path)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == {"list_runs", "read_session", "report", "examine_claim", "list_sessions", "show_session"}
        # the caller names a claim only: no model, endpoint or key can be passed
        assert set(tools["examine_claim"].input_schema["properties"]) == {"claim"}

        examined = await client.call_tool("examine_claim", {"claim": "The capital of Eritrea is Asmara."})
        assert not examined.is_error, _text(examined)
        verdict = examined.structured_content or json.loads(_text(examined))
        assert verdict["decision"] == "correct" and verdict["accepted"] is True
        assert verdict["run"] == "examine-mcp.jsonl" and "Asmara" in verdict["chat"]
        assert (tmp_path / "runs" / "examine-mcp.jsonl").exists()

        listed = await client.call_tool("list_runs", {})
        runs = listed.structured_content
        runs = runs["result"] if isinstance(runs, dict) and "result" in runs else runs
        assert [r["run"] for r in runs] == ["examine-mcp.jsonl"]
        assert runs[0]["sessions"] == 1 and runs[0]["decisions"] == {"correct": 1}

        chat = await client.call_tool("read_session", {"run": "examine-mcp.jsonl", "session_id": verdict["session_id"]})
        assert not chat.is_error and "Is Asmara the capital of Eritrea?" in _text(chat)

        report = await client.call_tool("report", {"run": "examine-mcp.jsonl"})
        assert not report.is_error and "1 session" in _text(report)


async def test_what_a_caller_gets_wrong_is_a_tool_error_naming_it(tmp_path: Path) -> None:
    async with mcp.Client(_server(tmp_path)) as client:
        unknown = await client.call_tool("report", {"run": "../../etc/passwd"})
        assert unknown.is_error and "no run '../../etc/passwd' in the served folders" in _text(unknown)
        (tmp_path / "runs" / "notes.jsonl").write_text('{"not": "a transcript"}\n', encoding="utf-8")
        listed = await client.call_tool("list_runs", {})
        assert "notes.jsonl" not in json.dumps(listed.structured_content)
        empty = await client.call_tool("examine_claim", {"claim": "  "})
        assert empty.is_error and "claim: empty" in _text(empty)
