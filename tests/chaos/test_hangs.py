"""A run against an endpoint that sometimes never answers finishes in bounded time, every session accounted for:
asserted on what bounds it (the deadline of every attempt, the attempts of every call, the backoffs drawn), never
on a clock; ``bench/chaos_timings.py hangs`` measures the wall time against the bound for docs/reliability.md."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tenacity import RetryCallState

from tests.chaos.conftest import questions
from tests.chaos.protocol import replies
from tests.chaos.server import ChaosServer, at_rates
from voirdire.agents.model_agent import ModelAgent
from voirdire.cli import main
from voirdire.models.openai import OpenAIChatClient
from voirdire.transcript import ModelCall, load

SESSIONS, CONCURRENCY, TIMEOUT_S, RETRIES = 50, 10, 1.0, 3
BACKOFF_S, BACKOFF_CAP_S = 0.5, 8.0  # ModelAgent's defaults


def test_fifty_sessions_with_five_percent_hangs_finish_in_bounded_time(
    chaos_cli: None, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    deadlines: list[float] = []  # the deadline of every attempt, as the client set it
    waits: list[tuple[int, float]] = []  # (retry number, the wait drawn before it)
    send, before_sleep = OpenAIChatClient._send, ModelAgent._before_sleep

    async def timed(self: OpenAIChatClient, body: dict[str, Any], timeout: float | None = None) -> Any:
        deadlines.append(timeout or self.timeout)
        return await send(self, body, timeout)

    def waited(self: ModelAgent, state: RetryCallState) -> None:
        if state.next_action is not None:
            waits.append((state.attempt_number, state.next_action.sleep))
        before_sleep(self, state)

    monkeypatch.setattr(OpenAIChatClient, "_send", timed)
    monkeypatch.setattr(ModelAgent, "_before_sleep", waited)
    data = questions(tmp_path / "qs.jsonl", SESSIONS)
    out = tmp_path / "t.jsonl"
    with ChaosServer(replies, at_rates({"hang": 0.05}, seed=13)) as server:
        code = main(
            [
                "run", "chaos", "--data", str(data), "--out", str(out), "--json",
                "--model", f"openai-compatible:chaos@{server.url}",
                "--timeout", str(TIMEOUT_S), "--max-retries", str(RETRIES), "--concurrency", str(CONCURRENCY),
            ]
        )  # fmt: skip
    payload = json.loads(capsys.readouterr().out)
    hangs = server.faults().get("hang", 0)
    assert hangs >= 3  # the plan really hung some requests
    # What bounds the run (docs/reliability.md): every attempt had the run's deadline, no call made more than
    # max_retries + 1 attempts, and every backoff was drawn within its cap.
    assert deadlines and set(deadlines) == {TIMEOUT_S} and len(deadlines) >= len(server.log)
    assert all(0 <= wait <= min(BACKOFF_CAP_S, BACKOFF_S * 2 ** (k - 1)) for k, wait in waits), waits
    assert all(k <= RETRIES for k, _ in waits)
    t = load(out)
    assert len(t.sessions) == SESSIONS
    for s in t.sessions.values():  # a verdict or a recorded failure, never neither, never both
        assert (s.verdict is None) != (not s.errors), s.session_id
    assert code == (3 if payload["errors"] else 0)
    calls = [c for s in t.sessions.values() for c in s.of_kind(ModelCall)]
    assert all(c.retries <= RETRIES for c in calls)
    retried = sum(c.retries for c in calls)
    assert retried >= hangs - len(payload["errors"]) * (RETRIES + 1)  # a hang costs a retry, unless it ended a session
    assert payload["retries"] >= retried
