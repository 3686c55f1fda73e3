"""An endpoint that refuses some items is not down: a 403 or 404 on a few items (a content filter, a deployment
missing for one model) is those sessions' errors and the run goes on; an endpoint that answers nothing at all (401
for every call) is down and stops the run at once (exit status 4)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.chaos.conftest import chaos_cli, questions  # noqa: F401  (chaos_cli is a fixture)
from tests.chaos.protocol import replies
from tests.chaos.server import ChaosServer
from voirdire.cli import main
from voirdire.transcript import SessionStart, load, read_lines

REFUSED = {"Capital 0?": "403", "Capital 1?": "404", "Capital 2?": "403"}


def refuse_three(index: int, body: dict[str, Any]) -> str:
    text = json.dumps(body.get("messages", []))
    return next((fault for question, fault in REFUSED.items() if question in text), "ok")


@pytest.mark.parametrize("concurrency", ["20", "1"])
def test_three_items_refused_of_100_are_their_sessions_errors_and_the_run_finishes(
    chaos_cli: None, tmp_path: Path, capsys: pytest.CaptureFixture[str], concurrency: str  # noqa: F811
) -> None:
    data, out = questions(tmp_path / "qs.jsonl", 100), tmp_path / "t.jsonl"
    with ChaosServer(replies, refuse_three) as server:
        code = main(
            ["run", "chaos", "--data", str(data), "--out", str(out), "--concurrency", concurrency, "--no-progress",
             "--model", f"openai-compatible:m@{server.url}"]
        )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 3, err  # sessions failed; the run was not stopped
    assert "run stopped" not in err
    transcript = load(out)
    assert len(transcript.finished()) == 97
    failed = sorted(str(s.item_id) for s in transcript.sessions.values() if s.verdict is None and s.errors)
    assert failed == ["q000", "q001", "q002"]
    assert "HTTP 403" in err and "HTTP 404" in err


def test_three_refused_items_still_count_toward_max_errors(
    chaos_cli: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]  # noqa: F811
) -> None:
    data, out = questions(tmp_path / "qs.jsonl", 100), tmp_path / "t.jsonl"
    with ChaosServer(replies, refuse_three) as server:
        code = main(
            ["run", "chaos", "--data", str(data), "--out", str(out), "--concurrency", "1", "--no-progress",
             "--max-errors", "1", "--model", f"openai-compatible:m@{server.url}"]
        )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 4 and "2 sessions failed, more than max_errors=1 allows" in err


def test_an_endpoint_answering_401_to_every_call_is_down(
    chaos_cli: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]  # noqa: F811
) -> None:
    data, out = questions(tmp_path / "qs.jsonl", 100), tmp_path / "t.jsonl"
    with ChaosServer(replies, lambda index, body: "401") as server:
        code = main(
            ["run", "chaos", "--data", str(data), "--out", str(out), "--concurrency", "4", "--no-progress",
             "--model", f"openai-compatible:m@{server.url}"]
        )  # fmt: skip
        sent = len(server.log)
    err = capsys.readouterr().err
    stopped = [line for line in err.splitlines() if line.startswith("voirdire: run stopped:")]
    assert code == 4 and len(stopped) == 1, err
    assert "refused its first 3 requests and answered none" in stopped[0] and "HTTP 401" in stopped[0]
    assert sent < 10  # 3 refusals, plus what was already in flight
    assert sum(isinstance(r, SessionStart) for r in read_lines(out)) < 100
