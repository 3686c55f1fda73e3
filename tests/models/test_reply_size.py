"""The reply cap is applied while reading: a body longer than ``VOIRDIRE_MAX_REPLY_CHARS`` allows (a reply of 20 MB,
an endless chunked one) is read no further than the cap, its connection closed, and the attempt fails with one clear
error, for every provider. Peak memory is measured by ``bench/reply_memory.py``, not here. 127.0.0.1 only."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from autogen_core.models import UserMessage

from voirdire.agents.model_agent import describe, is_transient
from voirdire.models.anthropic import AnthropicClient
from voirdire.models.azure import AzureOpenAIClient
from voirdire.models.base import InvalidReply
from voirdire.models.ollama import OllamaClient
from voirdire.models.openai import OpenAIChatClient, reply_byte_cap

QUESTION = [UserMessage(content="q", source="user")]
CAP_CHARS = 1000
BIG = 20_000_000
OPENINGS = {  # each API's reply up to the start of its text, which then never ends (or ends after BIG bytes)
    "openai": b'{"choices":[{"message":{"role":"assistant","content":"',
    "azure": b'{"choices":[{"message":{"role":"assistant","content":"',
    "anthropic": b'{"content":[{"type":"text","text":"',
    "ollama": b'{"message":{"role":"assistant","content":"',
}
CLOSINGS = {
    "openai": b'"},"finish_reason":"stop"}]}',
    "azure": b'"},"finish_reason":"stop"}]}',
    "anthropic": b'"}],"stop_reason":"end_turn"}',
    "ollama": b'"},"done_reason":"stop"}',
}


class Flood:
    """A server whose every reply is ``opening`` + x's: ``size`` bytes in all with a Content-Length, or chunked and
    endless when ``size`` is None. It counts the bytes it got out before the client hung up."""

    def __init__(self, provider: str, size: int | None) -> None:
        self.sent: list[int] = []
        self.hung_up = threading.Event()
        flood = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                opening, closing = OPENINGS[provider], CLOSINGS[provider]
                block = b"x" * 65536
                sent = 0
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if size is not None:
                    self.send_header("Content-Length", str(size))
                else:
                    self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    if size is not None:
                        self.wfile.write(opening)
                        sent = len(opening)
                        while sent + len(block) + len(closing) <= size:
                            self.wfile.write(block)
                            sent += len(block)
                        self.wfile.write(b"x" * (size - sent - len(closing)) + closing)
                        sent = size
                    else:
                        for data in itertools.chain([opening], itertools.repeat(block)):
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                            sent += len(data)
                except OSError:  # the client closed the connection
                    flood.hung_up.set()
                flood.sent.append(sent)

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


def client_of(provider: str, url: str) -> OpenAIChatClient:
    if provider == "openai":
        return OpenAIChatClient("m", base_url=f"{url}/v1", api_key="k", timeout=60)
    if provider == "anthropic":
        return AnthropicClient("claude", api_key="k", base=url, timeout=60)
    if provider == "azure":
        return AzureOpenAIClient("dep", endpoint=url, api_key="k", timeout=60)
    return OllamaClient("llama", url=url, timeout=60)


@pytest.fixture
def small_cap(monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    monkeypatch.setenv("VOIRDIRE_MAX_REPLY_CHARS", str(CAP_CHARS))
    yield reply_byte_cap(1)


@pytest.mark.parametrize("provider", ["openai", "anthropic", "azure", "ollama"])
@pytest.mark.parametrize("size", [BIG, None], ids=["20 MB", "endless"])
async def test_a_body_past_the_cap_is_read_no_further_and_its_connection_closed(
    provider: str, size: int | None, small_cap: int
) -> None:
    flood = Flood(provider, size)
    try:
        client = client_of(provider, flood.url)
        try:
            with pytest.raises(InvalidReply) as caught:
                await client.complete(QUESTION, {})
        finally:
            await client.close()
        text = describe(caught.value)
        assert f"more than {small_cap:,} bytes" in text and "VOIRDIRE_MAX_REPLY_CHARS" in text, text
        assert is_transient(caught.value)  # a runaway reply may be a blip: retried like any reply that is not one
        if size is None:  # an endless body is only ever ended by the client's hanging up
            assert flood.hung_up.wait(30)
    finally:
        flood.close()
    assert small_cap < 1_000_000 < (size or BIG)


@pytest.mark.parametrize("provider", ["openai", "anthropic", "azure", "ollama"])
async def test_a_reply_within_the_cap_is_read_whole(provider: str, small_cap: int) -> None:
    size = len(OPENINGS[provider]) + len(CLOSINGS[provider]) + 900
    flood = Flood(provider, size)
    try:
        client = client_of(provider, flood.url)
        try:
            done = await client.complete(QUESTION, {})
        finally:
            await client.close()
    finally:
        flood.close()
    assert done.texts == ["x" * 900]
