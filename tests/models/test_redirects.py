"""A key never follows a redirect: every provider (openai, anthropic, azure, ollama) answered 301, 302, 307 or 308
toward another host, toward plain http on another port, or toward another path of the same host sends nothing
there, and fails with one clear error naming the (redacted) target. 127.0.0.1 and 127.0.0.2 only."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from autogen_core.models import UserMessage

from voirdire.agents.model_agent import describe, is_transient
from voirdire.models.anthropic import AnthropicClient
from voirdire.models.azure import AzureOpenAIClient
from voirdire.models.base import ModelHTTPError
from voirdire.models.ollama import OllamaClient
from voirdire.models.openai import OpenAIChatClient

KEY = "vd-redirect-key-5f0c9e2a7b14d3"
QUESTION = [UserMessage(content="q", source="user")]
REPLIES: dict[str, dict[str, Any]] = {  # what each API would answer, were the request followed
    "openai": {"choices": [{"message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]},
    "anthropic": {"content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn"},
    "azure": {"choices": [{"message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]},
    "ollama": {"message": {"role": "assistant", "content": "hi"}, "done_reason": "stop"},
}


class Server:
    """An HTTP server on ``host`` that logs every request (method, path, headers) and answers from ``answer``."""

    def __init__(self, host: str, answer: Callable[[str], tuple[int, dict[str, str], bytes]]) -> None:
        self.seen: list[tuple[str, str, dict[str, str]]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return None

            def _any(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                server.seen.append((self.command, self.path, {k.lower(): v for k, v in self.headers.items()}))
                status, headers, body = answer(self.path)
                self.send_response(status)
                for name, value in {"Content-Length": str(len(body)), **headers}.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _any

        self.http = ThreadingHTTPServer((host, 0), Handler)
        self.url = f"http://{host}:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


@pytest.fixture
def collectors() -> Iterator[tuple[Server, Server]]:
    """Servers on another host (127.0.0.2) and on another port of this one, answering every API's reply: where a
    followed redirect would land."""
    reply = json.dumps({**REPLIES["openai"], **REPLIES["anthropic"], **REPLIES["ollama"]}).encode()
    found = tuple(Server(host, lambda path: (200, {"Content-Type": "application/json"}, reply))
                  for host in ("127.0.0.2", "127.0.0.1"))  # fmt: skip
    yield found[0], found[1]
    for server in found:
        server.close()


def client_of(provider: str, url: str) -> OpenAIChatClient:
    if provider == "openai":
        return OpenAIChatClient("m", base_url=f"{url}/v1", api_key=KEY, timeout=5)
    if provider == "anthropic":
        return AnthropicClient("claude", api_key=KEY, base=url, timeout=5)
    if provider == "azure":
        return AzureOpenAIClient("dep", endpoint=url, api_key=KEY, timeout=5)
    return OllamaClient("llama", url=url, api_key=KEY, timeout=5)


TARGETS = ("another host", "plain http on another port", "the same host")


@pytest.mark.parametrize("provider", ["openai", "anthropic", "azure", "ollama"])
@pytest.mark.parametrize("status", [301, 302, 307, 308])
@pytest.mark.parametrize("target", TARGETS)
async def test_a_redirect_is_never_followed_and_names_its_redacted_target(
    provider: str, status: int, target: str, collectors: tuple[Server, Server]
) -> None:
    location = ""

    def redirect(path: str) -> tuple[int, dict[str, str], bytes]:  # the model's server; its /moved answers too
        if path.startswith("/moved"):
            return 200, {"Content-Type": "application/json"}, json.dumps(REPLIES[provider]).encode()
        return status, {"Location": location}, b""

    origin = Server("127.0.0.1", redirect)
    where = {
        "another host": f"{collectors[0].url}/collect",
        "plain http on another port": f"{collectors[1].url}/collect",
        "the same host": f"{origin.url}/moved",
    }[target]
    location = f"{where}?api_key={KEY}&page=1"
    try:
        client = client_of(provider, origin.url)
        try:
            with pytest.raises(ModelHTTPError) as caught:
                await client.complete(QUESTION, {})
        finally:
            await client.close()
    finally:
        origin.close()
    exc = caught.value
    text = describe(exc)
    # One request, to the model's URL; nothing went where the redirect pointed.
    assert [path for _, path, _ in origin.seen if path.startswith("/moved")] == [] and len(origin.seen) == 1
    assert not collectors[0].seen and not collectors[1].seen
    assert exc.status_code == status and not is_transient(exc)
    assert f"redirected to {where}" in text and "not followed" in text, text
    assert KEY not in text and "api_key" not in text  # the target is redacted: no query string
