"""The time budget of a request and fail-fast, against the OpenAI client on a local server: a request's deadline
starts once it has a slot at the endpoint's limit (time queued is neither its failure nor the server's overload),
the wait for a slot ends with the session's budget, and an endpoint that refuses its first requests (nothing
listening, HTTP 401) is down at once."""

from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import Callable
from typing import Any

import pytest
from autogen_core.models import UserMessage

from tests.chaos.protocol import replies
from tests.chaos.server import ChaosServer
from voirdire.base.errors import EndpointDown
from voirdire.models import ReplyTimeout
from voirdire.models.base import ModelConnectionError, ModelHTTPError
from voirdire.models.limiter import FAIL_FAST_AFTER, AdaptiveLimit
from voirdire.models.openai import openai_compatible_client

ASK = [UserMessage(content="Answer: the capital of France?", source="user")]
DEADLINE_S = 60  # a request's timeout where no test waits for it to pass: a bound, never a measure


def client(url: str) -> Any:
    return openai_compatible_client("m", url, spec_text="openai-compatible:m@" + url, api_key=None)


async def until(condition: Callable[[], bool], what: str) -> None:
    """Wait for what the code under test has done, not for a time (the bound only keeps a broken test finite)."""
    for _ in range(6000):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never happened: {what}")


async def test_a_request_queued_at_the_limit_gets_its_whole_deadline_once_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOIRDIRE_MAX_CONNECTIONS", "1")  # one request at a time: the others queue
    queued: dict[Any, tuple[float, float]] = {}  # a request's task -> when it asked for a slot, when it got it
    deadlines: dict[Any, float] = {}  # a request's task -> the deadline the client set around it
    acquire, timeout_at = AdaptiveLimit.acquire, asyncio.timeout_at

    async def slot(self: AdaptiveLimit) -> int:
        loop = asyncio.get_running_loop()
        asked = loop.time()
        ticket = await acquire(self)
        queued[asyncio.current_task()] = (asked, loop.time())
        return ticket

    def deadline(when: float | None) -> asyncio.Timeout:
        if sys._getframe(1).f_globals.get("__name__") == "voirdire.models.openai" and when is not None:
            deadlines[asyncio.current_task()] = when  # the client's own, not the HTTP library's
        return timeout_at(when)

    monkeypatch.setattr(AdaptiveLimit, "acquire", slot)
    monkeypatch.setattr(asyncio, "timeout_at", deadline)
    with ChaosServer(replies, lambda index, body: "ok") as server:
        c = client(server.url)
        outcomes = await asyncio.gather(*(c.complete(ASK, {"timeout": DEADLINE_S}) for _ in range(14)),
                                        return_exceptions=True)  # fmt: skip
        limit = c._endpoint.limit if c._endpoint else None
        await c.close()
    assert not [o for o in outcomes if isinstance(o, BaseException)], outcomes
    assert len(server.log) == 14 and limit is not None and limit.decreases == 0 and limit.queued == 13
    # What the client decided: every request's deadline is its whole timeout counted from the moment it got its
    # slot, never from the moment it asked for one (13 of them waited for the requests before them).
    assert set(deadlines) == set(queued) and len(queued) == 14
    assert all(deadlines[task] >= got + DEADLINE_S for task, (_, got) in queued.items())
    assert sum(got > asked for asked, got in queued.values()) >= 13


async def test_the_wait_for_a_slot_is_bounded_by_the_session_s_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOIRDIRE_MAX_CONNECTIONS", "1")
    budgets: list[asyncio.Timeout] = []
    with ChaosServer(replies, lambda index, body: "hang", hang_s=60) as server:
        c = client(server.url)

        async def session() -> Any:  # a session's budget, as the runner's session_timeout sets it: a cancellation
            async with asyncio.timeout(None) as budget:
                budgets.append(budget)
                return await c.complete(ASK, {"timeout": 60})

        sessions = asyncio.gather(*(session() for _ in range(3)), return_exceptions=True)
        # One request at the server, two waiting for its slot: then the sessions' budgets run out, all at once.
        await until(
            lambda: len(server.log) == 1 and c._endpoint is not None and len(c._endpoint.limit._waiters) == 2,
            "one request sent and two queued",
        )
        for budget in budgets:
            budget.reschedule(asyncio.get_running_loop().time())
        outcomes = await sessions
        limit = c._endpoint.limit if c._endpoint else None
        await c.close()
    # The one sent and the two queued all end at the session's budget; no slot is kept, nothing queued was sent.
    assert all(isinstance(o, TimeoutError) and not isinstance(o, ReplyTimeout) for o in outcomes), outcomes
    assert len(server.log) == 1 and limit is not None and limit.in_flight == 0 and not limit._waiters


async def test_nothing_listening_makes_the_endpoint_down_after_its_first_refusals() -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    c = client(f"http://127.0.0.1:{port}/v1")
    outcomes = await asyncio.gather(*(c.complete(ASK, {"timeout": 5}) for _ in range(8)), return_exceptions=True)
    later = await asyncio.gather(c.complete(ASK, {"timeout": 5}), return_exceptions=True)
    await c.close()
    refused = [o for o in outcomes if isinstance(o, ModelConnectionError)]
    assert len(refused) >= FAIL_FAST_AFTER and all(isinstance(o, ModelConnectionError | EndpointDown) for o in outcomes)
    assert isinstance(later[0], EndpointDown)
    assert f"127.0.0.1:{port}" in str(later[0]) and "refused its first 3 requests" in str(later[0])


async def test_http_refusals_make_the_endpoint_down_unless_it_ever_answered() -> None:
    fault = "401"  # a 403 or 404 refuses an item, not the client: tests/core/test_partly_refusing.py
    with ChaosServer(replies, lambda index, body: fault) as server:
        c = client(server.url)
        for _ in range(FAIL_FAST_AFTER):
            with pytest.raises(ModelHTTPError):
                await c.complete(ASK, {"timeout": 5})
        with pytest.raises(EndpointDown, match="HTTP 401"):
            await c.complete(ASK, {"timeout": 5})
        await c.close()
    assert len(server.log) == FAIL_FAST_AFTER  # the fourth was never sent
    with ChaosServer(replies, lambda index, body: "ok" if index == 0 else fault) as server:
        c = client(server.url)
        await c.complete(ASK, {"timeout": 5})
        for _ in range(FAIL_FAST_AFTER * 2):  # refusals after an answer are retried as usual, never "down"
            with pytest.raises(ModelHTTPError):
                await c.complete(ASK, {"timeout": 5})
        await c.close()


def test_a_down_endpoint_is_not_retried() -> None:
    from voirdire.agents.model_agent import is_transient
    from voirdire.base.errors import run_stopping

    assert not is_transient(EndpointDown("http://127.0.0.1:9/v1 refused its first 3 requests"))
    who = "examiner via openai-compatible:m@http://127.0.0.1:9/v1"
    line = f"ModelCallError: {who}: EndpointDown: it is down (after 1 retries)"
    assert run_stopping(line) == f"{who}: it is down"
    assert run_stopping("ModelCallError: examiner via m: ReplyTimeout: no reply") is None
