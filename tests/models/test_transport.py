"""The OpenAI client's transport: every fault of the chaos server becomes one of voirdire's own errors (transient or
not, with the server's Retry-After and the HTTP library's error as cause), every client of an endpoint shares its
connections and limit, requests in flight are capped at the pool's size (no connection opened only to be
dropped), 429s and timeouts cut the endpoint's limit. 127.0.0.1 only."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from autogen_core.models import UserMessage

from tests.chaos.server import ChaosServer, in_order
from voirdire.agents.model_agent import describe, is_transient, retry_after
from voirdire.models import (
    InvalidReply,
    ModelSpecError,
    ReplyTimeout,
    build_client,
    openai as client_module,
    parse_spec,
)
from voirdire.models.base import ModelConnectionError, ModelHTTPError, TransientHTTPError
from voirdire.models.limiter import endpoint_limits
from voirdire.models.openai import NO_KEY, OpenAIChatClient

QUESTION = [UserMessage(content="q", source="user")]


async def failure(url: str, fault: str) -> BaseException:
    # A deadline only a hang reaches; every other fault is answered well within 60 s on a busy machine.
    with ChaosServer(lambda m: "hi", in_order([fault]), retry_after="7") as server:
        client = OpenAIChatClient("m", base_url=server.url + url, api_key=NO_KEY, timeout=2 if fault == "hang" else 60)
        try:
            await client.complete(QUESTION, {})
        except Exception as exc:
            return exc
        finally:
            await client.close()
    raise AssertionError(f"{fault}: no error")


@pytest.mark.parametrize(
    ("fault", "path", "kind", "transient", "text"),
    [
        ("429", "", TransientHTTPError, True, "TransientHTTPError: HTTP 429: "),
        ("500", "", TransientHTTPError, True, "TransientHTTPError: HTTP 500: "),
        ("404", "/wrong", ModelHTTPError, False, "ModelHTTPError: HTTP 404: "),
        ("drop", "", ModelConnectionError, True, "ModelConnectionError: no answer from http://127.0.0.1:"),
        ("truncated", "", ModelConnectionError, True, "ModelConnectionError: no answer from http://127.0.0.1:"),
        ("cut_json", "", InvalidReply, True, "InvalidReply: HTTP 200 whose body is not a JSON chat completion"),
        ("garbage", "", InvalidReply, True, "InvalidReply: HTTP 200 whose body is not a JSON chat completion"),
        ("wrong_json", "", InvalidReply, True, "InvalidReply: HTTP 200 whose body is not a chat completion"),
        ("empty", "", InvalidReply, True, "InvalidReply: HTTP 200 whose body is not a chat completion"),
        ("hang", "", ReplyTimeout, True, "ReplyTimeout: no complete reply within 2 s (timeout)"),
    ],
)
@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])  # both HTTP libraries (VOIRDIRE_TRANSPORT) alike
async def test_every_fault_is_one_of_voirdires_errors(
    fault: str, path: str, kind: type[BaseException], transient: bool, text: str, transport: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("VOIRDIRE_TRANSPORT", transport)
    exc = await failure(path, fault)
    assert type(exc) is kind and is_transient(exc) is transient
    assert describe(exc).startswith(text), describe(exc)
    if isinstance(exc, ModelConnectionError):
        assert exc.__cause__ is not None and f"({type(exc.__cause__).__name__}: " in describe(exc)
    if isinstance(exc, ModelHTTPError):
        assert exc.status_code == int(fault) and retry_after(exc) == (7.0 if fault == "429" else None)


def test_an_http_error_answer_keeps_the_servers_message_and_code() -> None:
    from voirdire.models.base import http_error

    quota = http_error(429, "You exceeded your quota", code="insufficient_quota", headers={})
    assert type(quota) is ModelHTTPError and not is_transient(quota)  # an exhausted quota does not come back
    assert is_transient(http_error(408, "slow", code=None, headers={}))
    assert not is_transient(http_error(400, "bad", code=None, headers={}))


async def test_a_bad_connection_count_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOIRDIRE_MAX_CONNECTIONS", "0")
    with pytest.raises(ModelSpecError, match="VOIRDIRE_MAX_CONNECTIONS='0': expected a whole number"):
        build_client(parse_spec("openai-compatible:m@http://127.0.0.1:9/v1"))


async def test_the_request_sent() -> None:
    with ChaosServer(lambda m: "  hi  ") as server:
        client = OpenAIChatClient("m", base_url=server.url + "/", api_key="sk-role-key-123456")
        done = await client.complete(QUESTION, {"max_tokens": 5, "temperature": 0.0, "stop": ["x"], "timeout": 5})
        await client.close()
    (logged,) = server.log
    assert done.texts == ["hi"] and done.finish_reason == "stop"
    assert (done.usage.prompt_tokens, done.usage.completion_tokens) == (11, 1)
    assert logged.path == "/v1/chat/completions"
    assert logged.body == {
        "model": "m",
        "messages": [{"role": "user", "content": "q"}],
        "max_tokens": 5,
        "temperature": 0.0,
        "stop": ["x"],
    }
    assert logged.headers["authorization"] == "Bearer sk-role-key-123456"
    assert logged.headers["content-type"] == "application/json"


def test_the_base_urls_query_is_kept() -> None:
    # The SDK would post to "/v1/?api-version=1chat/completions": the path appended after the query.
    chat_url = client_module._chat_url
    assert chat_url("http://h:1/v1?api-version=1") == "http://h:1/v1/chat/completions?api-version=1"
    assert chat_url("http://h:1/v1/") == chat_url("http://h:1/v1") == "http://h:1/v1/chat/completions"
    assert chat_url("https://api.openai.com/v1") == "https://api.openai.com/v1/chat/completions"


@dataclass
class Counts:
    connections: int = 0
    in_flight: int = 0
    peak: int = 0
    requests: int = 0


@contextlib.asynccontextmanager
async def slow_endpoint(latency_s: float) -> AsyncIterator[tuple[str, Counts]]:
    """A keep-alive chat-completions endpoint in this event loop that answers after ``latency_s`` and counts the
    connections it accepted and the requests it held at once."""
    counts = Counts()
    reply = json.dumps(
        {"choices": [{"message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}], "usage": None}
    ).encode()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        counts.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                )
                await reader.readexactly(length)
                counts.requests += 1
                counts.in_flight += 1
                counts.peak = max(counts.peak, counts.in_flight)
                await asyncio.sleep(latency_s)
                counts.in_flight -= 1
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(reply)
                )
                writer.write(reply)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1", counts
    finally:
        server.close()


async def test_requests_in_flight_are_capped_at_the_pool_and_every_connection_is_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("VOIRDIRE_MAX_CONNECTIONS", "5")
    async with slow_endpoint(0.02) as (url, counts):
        client = OpenAIChatClient("m", base_url=url, api_key=NO_KEY)
        for _ in range(3):  # three waves of 20: the same 5 connections serve all 60
            done = await asyncio.gather(*(client.complete(QUESTION, {}) for _ in range(20)))
            assert all(d.texts == ["ok"] for d in done)
        await client.close()
    assert counts.requests == 60 and counts.peak == 5 and counts.connections == 5


@pytest.mark.parametrize(("transport", "pools"), [("httpx", 3), ("aiohttp", 1)])
async def test_the_connections_are_held_in_pools_of_sixteen_on_httpx_one_on_aiohttp(
    monkeypatch: pytest.MonkeyPatch, transport: str, pools: int
) -> None:
    monkeypatch.setenv("VOIRDIRE_MAX_CONNECTIONS", "40")
    monkeypatch.setenv("VOIRDIRE_TRANSPORT", transport)
    async with slow_endpoint(0.05) as (url, counts):
        client = OpenAIChatClient("m", base_url=url, api_key=NO_KEY)
        await asyncio.gather(*(client.complete(QUESTION, {}) for _ in range(60)))
        shards = client_module._ENDPOINTS[url].shards
        assert [s.in_flight for s in shards] == [0] * pools  # httpx: 16 + 16 + 8; aiohttp: 40 in one
        await client.close()
    assert counts.peak == 40 and counts.connections == 40


async def test_clients_of_one_endpoint_share_its_pool_and_limit_each_sending_its_own_key() -> None:
    with ChaosServer(lambda m: "hi") as server:
        first = OpenAIChatClient("a", base_url=server.url, api_key="first-key-1234567890")
        second = OpenAIChatClient("b", base_url=server.url, api_key="second-key-0987654321")
        await asyncio.gather(first.complete(QUESTION, {}), second.complete(QUESTION, {}))
        assert first._endpoint is second._endpoint is client_module._ENDPOINTS[server.url]
        assert server.url in endpoint_limits()
        await first.close()
        assert server.url in client_module._ENDPOINTS  # the other client still uses it
        await second.complete(QUESTION, {})
        await second.close()
    assert server.url not in client_module._ENDPOINTS and server.url not in endpoint_limits()
    keys = {e.body["model"]: e.headers["authorization"] for e in server.log}
    assert keys == {"a": "Bearer first-key-1234567890", "b": "Bearer second-key-0987654321"}


@pytest.mark.parametrize(("fault", "cut"), [("429", True), ("hang", True), ("500", False), ("drop", False)])
async def test_a_429_or_a_timeout_cuts_the_endpoints_limit(fault: str, cut: bool) -> None:
    with ChaosServer(lambda m: "hi", in_order(["ok", fault])) as server:
        # the hang's deadline 2 s; the answers a busy machine must give in time have 60 s
        clients = [OpenAIChatClient("m", base_url=server.url, api_key=NO_KEY, timeout=2 if fault == "hang" else 60)
                   for _ in range(2)]  # fmt: skip
        await clients[0].complete(QUESTION, {"timeout": 60})
        assert endpoint_limits()[server.url] == (256, 0)
        with pytest.raises((ModelHTTPError, ReplyTimeout, ModelConnectionError)):
            await clients[1].complete(QUESTION, {})
        limit = client_module._ENDPOINTS[server.url].limit
        assert endpoint_limits()[server.url] == ((1, 0) if cut else (256, 0))  # one in flight: halved to the floor
        assert limit.decreases == int(cut)
        for client in clients:
            await client.close()


async def test_a_client_used_in_a_new_event_loop_gets_that_loops_pool() -> None:
    with ChaosServer(lambda m: "hi") as server:
        client = OpenAIChatClient("m", base_url=server.url, api_key=NO_KEY)

        def in_a_new_loop() -> object:
            async def once() -> object:
                await client.complete(QUESTION, {})
                return client._endpoint

            return asyncio.run(once())

        old = await asyncio.to_thread(in_a_new_loop)  # another loop (in another thread), now finished
        await client.complete(QUESTION, {})  # this loop's own pool, not the dead loop's
        assert client._endpoint is not old and client_module._ENDPOINTS[server.url] is client._endpoint
        await client.close()
    assert len(server.log) == 2


def test_an_unknown_transport_is_refused_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    from voirdire.models import ModelSpecError

    monkeypatch.setenv("VOIRDIRE_TRANSPORT", "curl")
    with pytest.raises(ModelSpecError, match="VOIRDIRE_TRANSPORT='curl': expected one of aiohttp, httpx"):
        OpenAIChatClient("m", base_url="http://127.0.0.1:9/v1", api_key=NO_KEY)


def test_the_proxy_comes_from_the_environment_as_httpx_reads_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from voirdire.models.transport import env_proxy

    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy",
                 "no_proxy"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    assert env_proxy("https://api.openai.com/v1/chat/completions") is None
    monkeypatch.setenv("HTTPS_PROXY", "proxy.internal:3128")
    monkeypatch.setenv("HTTP_PROXY", "http://plain.internal:8080")
    assert env_proxy("https://api.openai.com/v1/chat/completions") == "http://proxy.internal:3128"
    assert env_proxy("http://10.0.0.5:8000/v1/chat/completions") == "http://plain.internal:8080"
    monkeypatch.setenv("NO_PROXY", "10.0.0.5,.example.com")
    assert env_proxy("http://10.0.0.5:8000/v1/chat/completions") is None
    assert env_proxy("https://llm.example.com/v1/chat/completions") is None
    monkeypatch.delenv("HTTPS_PROXY")
    monkeypatch.setenv("ALL_PROXY", "http://all.internal:1080")
    assert env_proxy("https://api.openai.com/v1/chat/completions") == "http://all.internal:1080"
