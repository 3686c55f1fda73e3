"""Rate limits: the wait a server asks for (Retry-After, in seconds or as an HTTP date) is honoured: the wait the
client chose before its retry is the server's plus jitter (asserted on the wait decided, never on a clock;
``bench/chaos_timings.py retry-after`` measures the gaps the server sees); a wait longer than the cap is not
retried; backoff has full jitter."""

from __future__ import annotations

import random
import types
from email.utils import formatdate
from pathlib import Path

import pytest
from tenacity import RetryCallState

from tests.chaos.protocol import Chaos, Question, replies
from tests.chaos.server import ChaosServer, in_order
from voirdire.agents import model_agent
from voirdire.agents.model_agent import ModelAgent, backoff_delay, retry_after
from voirdire.models import RoleSettings
from voirdire.runner import run_protocol

JITTER_S = 0.5  # ModelAgent's backoff base: the most jitter added to a server's wait


async def run_once(url: str, tmp_path: Path) -> tuple[dict[str, str], dict[str, object]]:
    result = await run_protocol(
        Chaos(),
        [Question(id="q", question="Capital?")],
        out=tmp_path / "t.jsonl",
        roles={"*": RoleSettings(model=f"openai-compatible:chaos@{url}")},
    )
    return result.errors, {"retries": result.retries}


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The wait the client chose before each retry (what tenacity then sleeps)."""
    chosen: list[float] = []
    before_sleep = ModelAgent._before_sleep

    def noted(self: ModelAgent, state: RetryCallState) -> None:
        if state.next_action is not None:
            chosen.append(state.next_action.sleep)
        before_sleep(self, state)

    monkeypatch.setattr(ModelAgent, "_before_sleep", noted)
    return chosen


async def test_retry_after_seconds_is_honoured(tmp_path: Path, waits: list[float]) -> None:
    with ChaosServer(replies, in_order(["429", "429"]), retry_after="1") as server:
        errors, stats = await run_once(server.url, tmp_path)
    assert not errors and stats["retries"] == 2 and len(server.log) == 5  # 2 refused, then the 3 calls answered
    assert len(waits) == 2 and all(1.0 <= w <= 1.0 + JITTER_S for w in waits), waits


async def test_retry_after_as_an_http_date_is_honoured(
    tmp_path: Path, waits: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The client reads the date against a clock held still, 2 s before the date the server sends: its wait is
    # exactly those 2 s plus jitter, however long the reply took to arrive.
    now = 1_700_000_000.0
    clock = types.SimpleNamespace(time=lambda: now, perf_counter=model_agent.time.perf_counter)
    monkeypatch.setattr(model_agent, "time", clock)
    with ChaosServer(replies, in_order(["429"]), retry_after=lambda: formatdate(now + 2, usegmt=True)) as s:
        errors, stats = await run_once(s.url, tmp_path)
    assert not errors and stats["retries"] == 1 and len(s.log) == 4
    assert len(waits) == 1 and 2.0 <= waits[0] <= 2.0 + JITTER_S, waits


async def test_a_wait_longer_than_the_cap_is_not_retried(tmp_path: Path) -> None:
    with ChaosServer(replies, in_order(["429"]), retry_after="3600") as server:
        errors, stats = await run_once(server.url, tmp_path)
    assert len(server.log) == 1 and stats["retries"] == 0
    assert "the server asked to wait 3600 s (Retry-After), more than 60 s" in errors["q"]


def test_retry_after_parsing() -> None:
    class Response:
        def __init__(self, headers: dict[str, str]) -> None:
            self.headers = headers

    class Limited(Exception):
        def __init__(self, headers: dict[str, str]) -> None:
            self.response = Response(headers)

    now = 1_700_000_000.0
    assert retry_after(Limited({"retry-after": "7"})) == 7.0
    assert retry_after(Limited({"retry-after": "1.5"})) == 1.5
    assert retry_after(Limited({"retry-after-ms": "250", "retry-after": "9"})) == 0.25
    assert retry_after(Limited({"retry-after": formatdate(now + 30, usegmt=True)}), now=now) == pytest.approx(30)
    assert retry_after(Limited({"retry-after": formatdate(now - 30, usegmt=True)}), now=now) == 0.0  # past: now
    assert retry_after(Limited({"retry-after": "soon"})) is None
    assert retry_after(Limited({})) is None and retry_after(ValueError()) is None


def test_the_wait_chosen_is_the_servers_plus_jitter() -> None:
    from tenacity import RetryCallState

    from voirdire.agents.model_agent import wait_backoff_or_retry_after
    from voirdire.models.base import http_error

    wait = wait_backoff_or_retry_after(0.5, 8.0)
    for asked, headers in ((1.0, {"retry-after": "1"}), (None, {})):
        state = RetryCallState(None, None, (), {})
        state.set_exception((ValueError, http_error(429, "slow down", code=None, headers=headers), None))
        state.attempt_number = 3
        draws = [wait(state) for _ in range(500)]
        low, high = (1.0, 1.5) if asked else (0.0, 2.0)  # Retry-After plus up to 0.5 s; else backoff 0.5 * 2**2
        assert low <= min(draws) and max(draws) <= high and max(draws) - min(draws) > 0.3 * (high - low)


def test_backoff_is_exponential_with_full_jitter() -> None:
    rng = random.Random(1)
    for retry, ceiling in ((1, 0.5), (2, 1.0), (3, 2.0), (6, 8.0), (10, 8.0)):
        draws = [backoff_delay(retry, 0.5, 8.0, rng) for _ in range(2000)]
        assert 0 <= min(draws) < 0.05 * ceiling and 0.95 * ceiling < max(draws) <= ceiling
        assert sum(draws) / len(draws) == pytest.approx(ceiling / 2, rel=0.08)  # uniform over [0, ceiling]
