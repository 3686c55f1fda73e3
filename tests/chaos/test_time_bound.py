"""The documented time bound holds when every request hangs, at any concurrency, without ``--session-timeout``: the
endpoint's first attempts end at their own deadlines (a ``ReplyTimeout`` in flight), and an endpoint that has sent
nothing back to its first ``FAIL_FAST_AFTER`` requests is down, like one refusing connections: every attempt after
that fails at once (``EndpointDown``), queued or not, and the run stops with one message, resumable. Asserted on
what the client recorded and decided (its attempts, the deadline it set and what that deadline cancelled), never on
a clock; ``bench/time_bound.py`` measures the wall times for docs/reliability.md."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.chaos.conftest import questions
from tests.chaos.protocol import replies
from tests.chaos.server import ChaosServer
from voirdire.base import EndpointDown
from voirdire.cli import main
from voirdire.models import ReplyTimeout
from voirdire.models.limiter import FAIL_FAST_AFTER
from voirdire.models.openai import OpenAIChatClient
from voirdire.transcript import load

TIMEOUT_S, RETRIES = 0.5, 3


@pytest.mark.parametrize(("sessions", "concurrency"), [(1, 1), (16, 16), (32, 16)])
def test_every_request_hanging_the_endpoint_is_down_after_its_first_timeouts_and_the_run_resumes(
    sessions: int, concurrency: int, chaos_cli: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    attempts: list[BaseException] = []  # how each attempt of the client ended
    send = OpenAIChatClient._send

    async def recorded(self: OpenAIChatClient, body: dict[str, Any], timeout: float | None = None) -> Any:
        try:
            return await send(self, body, timeout)
        except BaseException as exc:
            attempts.append(exc)
            raise

    monkeypatch.setattr(OpenAIChatClient, "_send", recorded)
    data, out = questions(tmp_path / "qs.jsonl", sessions), tmp_path / "t.jsonl"
    hanging = [True]
    with ChaosServer(replies, lambda index, body: "hang" if hanging[0] else "ok", hang_s=30) as server:
        args = ["run", "chaos", "--data", str(data), "--out", str(out), "--json", "--no-progress",
                "--model", f"openai-compatible:chaos@{server.url}", "--concurrency", str(concurrency),
                "--timeout", str(TIMEOUT_S), "--max-retries", str(RETRIES), "--max-errors", "100%"]  # fmt: skip
        code = main(args)
        sent = len(server.log)
        captured = capsys.readouterr()
        # What the run decided: it stopped (even with an error budget that never stops), with one line naming the
        # endpoint and what it did, as a dead endpoint's run does.
        assert code == 4, captured.err
        stopped = [line for line in captured.err.splitlines() if line.startswith("voirdire: run stopped:")]
        assert len(stopped) == 1, captured.err
        assert f"witness via openai-compatible:chaos@{server.url}" in stopped[0]
        assert f"sent nothing back to its first {FAIL_FAST_AFTER} requests (ReplyTimeout: " in stopped[0]
        assert "run the same command again to resume" in stopped[0]
        # Every attempt ended at its own deadline in flight, or at once as the endpoint's being down; none was sent
        # after the endpoint was down: the ones that timed out are at most its first few and those then in flight.
        timed_out = [exc for exc in attempts if isinstance(exc, ReplyTimeout)]
        assert all(isinstance(exc, ReplyTimeout | EndpointDown) for exc in attempts), attempts
        assert FAIL_FAST_AFTER <= len(timed_out) <= concurrency + FAIL_FAST_AFTER and sent <= len(timed_out)
        assert any(isinstance(exc, EndpointDown) for exc in attempts)
        errors = json.loads(captured.out)["errors"]
        assert errors and all("EndpointDown" in error for error in errors.values()), errors
        assert len(load(out).sessions) <= sessions
        # The endpoint answers again: the same command resumes every session to a verdict.
        hanging[0] = False
        code = main(args)
        payload = json.loads(capsys.readouterr().out)
    assert code == 0 and not payload["errors"] and len(load(out).finished()) == sessions


class Trickle(BaseHTTPRequestHandler):
    """Answers 200 at once, then a byte of its body every 0.1 s: a server that is never silent long enough for a
    read timeout, and never done."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        return None

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.server.posts += 1  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "100000")
        self.end_headers()
        try:
            for _ in range(100_000):
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.1)
        except OSError:  # the client gave up
            pass


async def test_a_trickling_reply_ends_at_its_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every byte comes in time for a read timeout, yet the whole reply has one deadline: the one the client set
    when the request got its slot, which cancels the read still under way."""
    from autogen_core.models import UserMessage

    from voirdire.models.openai import openai_compatible_client

    deadlines: list[asyncio.Timeout] = []  # every deadline set around a request, as the client set it
    timeout_at = asyncio.timeout_at

    def recorded(when: float | None) -> asyncio.Timeout:
        made = timeout_at(when)
        if sys._getframe(1).f_globals.get("__name__") == "voirdire.models.openai":  # not the HTTP library's own
            deadlines.append(made)
        return made

    monkeypatch.setattr(asyncio, "timeout_at", recorded)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Trickle)
    server.daemon_threads = True
    server.posts = 0  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    client = openai_compatible_client("m", url, spec_text=f"openai-compatible:m@{url}", api_key=None)
    try:
        with pytest.raises(ReplyTimeout, match=f"no complete reply within {TIMEOUT_S:g} s") as raised:
            await client.complete([UserMessage(content="Answer: x", source="u")], {"timeout": TIMEOUT_S})
    finally:
        await client.close()
        server.shutdown()
        server.server_close()
    assert server.posts == 1  # type: ignore[attr-defined]
    # One deadline for the whole reply, and it is what ended it: it expired and cancelled the read under way (an
    # HTTP read timeout, per chunk, would fire later than it, since the trickle began after the deadline was set).
    (deadline,) = deadlines
    assert deadline.expired() and isinstance(raised.value.__cause__, TimeoutError)
