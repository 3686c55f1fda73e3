"""A dead endpoint stops the run at once with one message naming the role, the URL and the cause (exit status 4,
resumable); identical session errors are printed once with a count; a per-session deadline ends a session that
runs too long as its error, the others going on."""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Callable
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.chaos import server as chaos_server
from tests.chaos.conftest import questions
from tests.chaos.protocol import replies
from tests.chaos.server import ChaosServer
from voirdire.cli import main
from voirdire.transcript import SessionStart, load, read_lines


def held_port() -> socket.socket:
    """A port bound and not listening: a connection to it is refused, and no other test can take it meanwhile."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    return s


def server_on(held: socket.socket) -> Callable[[Any, Any], ThreadingHTTPServer]:
    """The chaos server's HTTP server on the held port's own socket, listening from now on."""

    def make(_address: Any, handler: Any) -> ThreadingHTTPServer:
        server = ThreadingHTTPServer(held.getsockname(), handler, bind_and_activate=False)
        server.socket.close()
        server.socket = held
        server.server_activate()
        return server

    return make


def test_nothing_listening_stops_the_run_at_once_with_one_message_and_it_resumes(
    chaos_cli: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    held = held_port()
    port = held.getsockname()[1]
    data, out = questions(tmp_path / "qs.jsonl", 200), tmp_path / "t.jsonl"
    args = ["run", "chaos", "--data", str(data), "--out", str(out), "--concurrency", "20", "--no-progress"]
    code = main([*args, "--model", f"openai-compatible:m@http://127.0.0.1:{port}/v1"])
    err = capsys.readouterr().err
    assert code == 4, err
    stopped = [line for line in err.splitlines() if line.startswith("voirdire: run stopped:")]
    assert len(stopped) == 1
    assert f"witness via openai-compatible:m@http://127.0.0.1:{port}/v1" in stopped[0]  # the role and the URL
    # the cause, as the HTTP library (VOIRDIRE_TRANSPORT) names it
    assert re.search(r"its first 3 requests and answered none \((ClientConnectorError|ConnectError): ", stopped[0])
    assert "run the same command again to resume" in stopped[0]
    assert len([line for line in err.splitlines() if line.startswith("error in")]) <= 2  # grouped, not 20
    started = sum(isinstance(r, SessionStart) for r in read_lines(out))
    assert started < 200  # it did not go through every item
    # The endpoint comes up on that port: the same command resumes every session to a verdict.
    monkeypatch.setattr(chaos_server, "ThreadingHTTPServer", server_on(held))
    with ChaosServer(replies):
        code = main([*args, "--model", f"openai-compatible:m@http://127.0.0.1:{port}/v1", "--json"])
    payload = json.loads(capsys.readouterr().out)
    assert code == 0 and not payload["errors"] and len(load(out).finished()) == 200


def test_an_endpoint_answering_404_to_every_call_stops_the_run_by_the_error_budget(
    chaos_cli: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A 404 is an item's refusal (a deployment missing for one model), not a sign the endpoint is down: the run
    # stops when the error budget is spent, not after 3 of them.
    data, out = questions(tmp_path / "qs.jsonl", 50), tmp_path / "t.jsonl"
    with ChaosServer(replies, lambda index, body: "404") as server:
        code = main(
            ["run", "chaos", "--data", str(data), "--out", str(out), "--concurrency", "4", "--no-progress",
             "--model", f"openai-compatible:m@{server.url}"]
        )  # fmt: skip
        sent = len(server.log)
    err = capsys.readouterr().err
    assert code == 4 and "more than max_errors=50% (at least 10) allows" in err and "HTTP 404" in err
    assert sent < 50  # the budget (25 of 50) spent, plus what was already in flight


def test_a_session_past_its_deadline_is_its_error_and_the_others_go_on(
    chaos_cli: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, out = questions(tmp_path / "qs.jsonl", 6), tmp_path / "t.jsonl"

    def plan(index: int, body: dict[str, object]) -> str:
        asked = json.dumps(body.get("messages"))
        return "hang" if "Capital 3?" in asked else "ok"  # one question's calls never answer

    # The budget is a bound the other sessions finish well within on a busy machine; only the hanging one reaches it.
    with ChaosServer(replies, plan, hang_s=60) as server:
        code = main(
            ["run", "chaos", "--data", str(data), "--out", str(out), "--concurrency", "6", "--json",
             "--model", f"openai-compatible:m@{server.url}", "--timeout", "30", "--session-timeout", "5"]
        )  # fmt: skip
    payload = json.loads(capsys.readouterr().out)
    assert code == 3 and list(payload["errors"]) == ["q003"]
    assert payload["errors"]["q003"].startswith("SessionTimeout: the session ran past its deadline of 5 s")
    assert len(load(out).finished()) == 5


@pytest.mark.parametrize("bad", ["0", "-1", "x", "inf"])
def test_session_timeout_must_be_a_positive_number(bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["examine", "X", "--model", "scripted:nope.yaml", "--session-timeout", bad])
    assert "--session-timeout" in capsys.readouterr().err


def test_the_default_error_budget_stops_a_run_where_most_sessions_fail(
    chaos_cli: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from voirdire.runner.options import DEFAULT_MAX_ERRORS, ErrorBudget

    assert DEFAULT_MAX_ERRORS.allowed(6) == 10 and DEFAULT_MAX_ERRORS.allowed(100) == 50
    assert ErrorBudget.parse("10%").allowed(6) == 0  # a budget given keeps no floor
    data, out = questions(tmp_path / "qs.jsonl", 40), tmp_path / "t.jsonl"
    with ChaosServer(replies, lambda index, body: "500") as server:  # fails every call, never "down"
        code = main(
            ["run", "chaos", "--data", str(data), "--out", str(out), "--no-progress", "--max-retries", "0",
             "--model", f"openai-compatible:m@{server.url}"]
        )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 4 and "21 sessions failed, more than max_errors=50% (at least 10) allows (20 of the 40" in err
