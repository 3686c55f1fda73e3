"""The time budget of a request and fail-fast, against the OpenAI client on a local server: a request's deadline
starts once it has a slot at the endpoint's limit (time queued is neither its failure nor the server's overload),
the wait for a slot ends with the session's budget, and an endpoint that refuses its first requests (nothing
listening, HTTP 401) is down at once."""

from __future__ import annotations

import asyncio
import socket
import time
from typing import Any

import pytest
from autogen_core.models import UserMessage

from tests.chaos.protocol import replies
from tests.chaos.server import ChaosServer
from voirdire.base.errors import EndpointDown
from voirdire.models import ReplyTimeout
from voirdire.models.base import ModelConnectionError, ModelHTTPError
from voirdire.models.limiter import FAIL_FAST_AFTER
from voirdire.models.openai import openai_compatible_client

ASK = [UserMessage(content="Answer: the capital of France?", source="user")]


def client(url: str) -> Any:
    return openai_compatible_client("m", url, spec_text="openai-compatible:m@" + url, api_key=None)


def slow(messages: list[dict[str, Any]]) -> str:
    """The chaos replies, each after 0.2 s: the last of 14 requests sent one at a time waits 2.6 s before it is
    sent, longer than its own deadline of 2 s, which is ten of these replies (room for a busy machine)."""
    time.sleep(0.2)
    return replies(messages)


async def test_a_request_queued_at_the_limit_gets_its_whole_deadline_once_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOIRDIRE_MAX_CONNECTIONS", "1")  # one request at a time: the others queue
    with ChaosServer(slow, lambda index, body: "ok") as server:
        c = client(server.url)
        outcomes = await asyncio.gather(*(c.complete(ASK, {"timeout": 2}) for _ in range(14)), return_exceptions=True)
        limit = c._endpoint.limit if c._endpoint else None
        await c.close()
    # Queued for up to 13 replies, longer than the deadline: no request failed for its wait in voirdire's own
    # queue (they used to, "all of it spent waiting"), every one was sent, and the wait cut nothing.
    assert not [o for o in outcomes if isinstance(o, BaseException)], outcomes
    assert len(server.log) == 14 and limit is not None and limit.decreases == 0 and limit.queued == 13


async def test_the_wait_for_a_slot_is_bounded_by_the_session_s_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOIRDIRE_MAX_CONNECTIONS", "1")
    with ChaosServer(replies, lambda index, body: "hang", hang_s=30) as server:
        c = client(server.url)

        async def session() -> Any:  # a session's budget, as the runner's session_timeout sets it: a cancellation
            async with asyncio.timeout(0.5):
                return await c.complete(ASK, {"timeout": 30})

        outcomes = await asyncio.gather(*(session() for _ in range(3)), return_exceptions=True)
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
