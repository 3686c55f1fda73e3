"""A run against an endpoint that sometimes never answers finishes in bounded time, every session accounted for."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest

from tests.chaos.conftest import questions
from tests.chaos.protocol import replies
from tests.chaos.server import ChaosServer, at_rates
from voirdire.cli import main
from voirdire.transcript import ModelCall, load

SESSIONS, CONCURRENCY, TIMEOUT_S, RETRIES = 50, 10, 1.0, 3
CALLS_PER_SESSION = 3
BACKOFF_S, BACKOFF_CAP_S = 0.5, 8.0  # ModelAgent's defaults


def run_bound_s() -> float:
    """The worst case: every attempt of every call times out and every backoff draws its maximum. A call takes at
    most (retries + 1) timeouts plus the backoffs; a session its calls in turn; sessions run in waves of
    ``CONCURRENCY``."""
    backoffs = sum(min(BACKOFF_CAP_S, BACKOFF_S * 2 ** (k - 1)) for k in range(1, RETRIES + 1))
    per_call = (RETRIES + 1) * TIMEOUT_S + backoffs
    return math.ceil(SESSIONS / CONCURRENCY) * CALLS_PER_SESSION * per_call


def test_fifty_sessions_with_five_percent_hangs_finish_in_bounded_time(
    chaos_cli: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = questions(tmp_path / "qs.jsonl", SESSIONS)
    out = tmp_path / "t.jsonl"
    with ChaosServer(replies, at_rates({"hang": 0.05}, seed=13)) as server:
        start = time.monotonic()
        code = main(
            [
                "run", "chaos", "--data", str(data), "--out", str(out), "--json",
                "--model", f"openai-compatible:chaos@{server.url}",
                "--timeout", str(TIMEOUT_S), "--max-retries", str(RETRIES), "--concurrency", str(CONCURRENCY),
            ]
        )  # fmt: skip
        wall = time.monotonic() - start
    payload = json.loads(capsys.readouterr().out)
    hangs = server.faults().get("hang", 0)
    print(f"\nchaos hangs: {wall:.1f} s wall (bound {run_bound_s():.1f} s), {len(server.log)} requests, {hangs} hangs")
    assert hangs >= 3  # the plan really hung some requests
    assert wall < run_bound_s()
    t = load(out)
    assert len(t.sessions) == SESSIONS
    for s in t.sessions.values():  # a verdict or a recorded failure, never neither, never both
        assert (s.verdict is None) != (not s.errors), s.session_id
    assert code == (3 if payload["errors"] else 0)
    retried = sum(c.retries for s in t.sessions.values() for c in s.of_kind(ModelCall))
    assert retried >= hangs - len(payload["errors"]) * (RETRIES + 1)  # a hang costs a retry, unless it ended a session
    assert payload["retries"] >= retried
