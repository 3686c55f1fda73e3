"""The documented time bound holds when every request hangs, at any concurrency: each attempt sent ends at its own
deadline (a ``ReplyTimeout`` in flight), and the wait for a slot at the endpoint's (cut) limit is bounded by the
session's budget (``--session-timeout``), not by one request's timeout: a session ends after its call's attempts or
at its budget, whichever comes first, however many sessions share the endpoint. Asserted on what the client
recorded and decided (its attempts, the deadline it set and what that deadline cancelled), never on a clock;
``bench/time_bound.py`` measures the wall times for docs/reliability.md."""

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
from voirdire.cli import main
from voirdire.models import ReplyTimeout
from voirdire.models.openai import OpenAIChatClient
from voirdire.transcript import load

TIMEOUT_S, RETRIES = 0.5, 3
SESSION_S = (RETRIES + 1) * TIMEOUT_S + 0.5 + 1 + 2  # a call's documented bound: its attempts and backoff caps


@pytest.mark.parametrize("concurrency", [1, 16, 64])
def test_every_request_hanging_each_session_ends_after_its_attempts_or_at_its_budget(
    concurrency: int, chaos_cli: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
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
    sessions = concurrency
    # Alone at the endpoint, a session is given ample budget (a busy machine stretches every attempt past its
    # timeout, and the bound has no slack): all its attempts are made, each ended by its own deadline.
    budget = SESSION_S if concurrency > 1 else 10 * SESSION_S
    data, out = questions(tmp_path / "qs.jsonl", sessions), tmp_path / "t.jsonl"
    with ChaosServer(replies, lambda index, body: "hang", hang_s=30) as server:
        code = main(
            ["run", "chaos", "--data", str(data), "--out", str(out), "--json", "--no-progress",
             "--model", f"openai-compatible:chaos@{server.url}", "--concurrency", str(concurrency),
             "--timeout", str(TIMEOUT_S), "--max-retries", str(RETRIES), "--session-timeout", str(budget),
             "--allow-errors", "--max-errors", "100%"]
        )  # fmt: skip
        sent = len(server.log)
    payload = json.loads(capsys.readouterr().out)
    errors = payload["errors"]
    assert code == 0 and len(errors) == sessions
    # Each session's first call failed after all its attempts, or its session's budget ended it (while an attempt
    # waited for a slot at the limit the timeouts cut, or was in flight).
    for error in errors.values():
        assert ("ReplyTimeout" in error and f"(after {RETRIES} retries)" in error) or "SessionTimeout" in error, error
    # An attempt ends as a timeout in flight, at its own deadline, or is cancelled by its session's budget; none
    # fails for its wait in voirdire's own queue, and none is sent twice.
    timed_out = [exc for exc in attempts if isinstance(exc, ReplyTimeout)]
    assert all(isinstance(exc, ReplyTimeout | asyncio.CancelledError) for exc in attempts), attempts
    assert not any("waiting" in str(exc) for exc in timed_out) and sent <= len(attempts)
    if concurrency == 1:  # nothing to queue behind: every call made all its attempts
        assert len(attempts) == sessions * (RETRIES + 1) and len(timed_out) == len(attempts)
        assert all("ReplyTimeout" in error for error in errors.values())
    assert len(load(out).sessions) == sessions


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
