"""Fake Anthropic Messages API (``POST /v1/messages``) and Ollama (``POST /api/chat``) servers on 127.0.0.1.

Each keeps every request (path, headers with lower-case names, body) and can fail its first requests with a status
and headers (``fail``: a list of ``(status, headers)``, taken in order). Replies come from a responder over the
OpenAI-style messages (system first); a request with a reply schema (Anthropic's forced tool, Ollama's ``format``)
is answered with JSON that fits it, its ``answer`` (when the schema has one) the choice the responder's text names.
"""

from __future__ import annotations

import json
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Responder = Callable[[list[dict[str, Any]]], str]


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def fitting(schema: dict[str, Any], text: str) -> Any:
    """A value that fits ``schema``; for a choice (``enum``), the one ``text`` names (else the first)."""
    if "enum" in schema:
        lowered = text.lower()
        named = [c for c in schema["enum"] if str(c).lower() in lowered]
        return max(named, key=lambda c: len(str(c))) if named else schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        return {name: fitting(sub, text) for name, sub in props.items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return 1
    if kind == "boolean":
        return True
    return text


@dataclass
class _Fake(ABC):
    responder: Responder
    fail: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    requests: list[Seen] = field(default_factory=list)
    url: str = ""

    @abstractmethod
    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """The status and JSON body this provider's API answers to a request."""

    def __enter__(self) -> _Fake:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                fake.requests.append(Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                if fake.fail:
                    status, headers = fake.fail.pop(0)
                    self._send(status, {"type": "error", "error": {"type": "busy", "message": "try later"}}, headers)
                    return
                self._send(*fake.answer(self.path, body))

            def _send(self, code: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


class FakeAnthropic(_Fake):
    """``POST /v1/messages``: a text block, or a ``tool_use`` block for a forced tool."""

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if path != "/v1/messages":
            return 404, {"type": "error", "error": {"type": "not_found_error", "message": f"no route {path}"}}
        if "max_tokens" not in body or not body.get("messages") or body["messages"][0]["role"] != "user":
            return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": "bad request"}}
        messages = ([{"role": "system", "content": body["system"]}] if "system" in body else []) + body["messages"]
        text = self.responder(messages)
        content: list[dict[str, Any]]
        if "tools" in body:
            tool = body["tools"][0]
            content = [
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": tool["name"],
                    "input": fitting(tool["input_schema"], text),
                }
            ]
        else:
            content = [{"type": "text", "text": text}]
        return 200, {
            "id": f"msg_{len(self.requests)}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": "tool_use" if "tools" in body else "end_turn",
            "usage": {"input_tokens": 12, "output_tokens": len(text.split())},
        }


class FakeOllama(_Fake):
    """``POST /api/chat`` (not streamed): the reply, JSON that fits ``format`` when one is given."""

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if path != "/api/chat":
            return 404, {"error": f"no route {path}"}
        if body.get("stream") is not False:
            return 400, {"error": "this fake answers only stream: false"}
        text = self.responder(body["messages"])
        if isinstance(body.get("format"), dict):
            text = json.dumps(fitting(body["format"], text))
        return 200, {
            "model": body["model"],
            "message": {"role": "assistant", "content": text},
            "done": True,
            "done_reason": "stop",
            "prompt_eval_count": 9,
            "eval_count": len(text.split()),
        }


class FakeChatCompletions(_Fake):
    """OpenAI's chat completions at any path ending in ``/chat/completions`` (the query string kept in ``path``):
    Azure's deployments, and the OpenAI-compatible endpoints of Gemini, Groq, Together, vLLM, LM Studio and
    llama.cpp's server."""

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if not path.partition("?")[0].endswith("/chat/completions"):
            return 404, {"error": {"message": f"no route {path}"}}
        text = self.responder(body["messages"])
        if "response_format" in body:
            text = json.dumps(fitting(body["response_format"]["json_schema"]["schema"], text))
        n = int(body.get("n", 1))
        return 200, {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": body.get("model", "fake"),
            "choices": [
                {"index": i, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                for i in range(n)
            ],
            "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
        }
