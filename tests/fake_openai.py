"""A fake OpenAI-compatible chat-completions server on 127.0.0.1 for integration tests (no network)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Responder = Callable[[list[dict[str, Any]]], str]


class FakeOpenAIServer:
    """Answers ``POST /v1/chat/completions`` with ``responder(messages)``; fails the first ``fail_first``
    requests with HTTP 500 to exercise retries. Every request body is kept in ``requests``."""

    def __init__(
        self,
        responder: Responder,
        fail_first: int = 0,
        *,
        reject_response_format: bool = False,
        honour_n: bool = True,
    ) -> None:
        self.responder = responder
        self.fail_first = fail_first
        self.reject_response_format = reject_response_format  # answer a response_format request with HTTP 400
        self.honour_n = honour_n  # False: return one choice whatever n asks
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                server.requests.append(body)
                if not self.path.endswith("/chat/completions"):
                    self._send(404, {"error": {"message": "not found"}})
                    return
                if server.fail_first > 0:
                    server.fail_first -= 1
                    self._send(500, {"error": {"message": "try again", "type": "server_error"}})
                    return
                if server.reject_response_format and "response_format" in body:
                    self._send(400, {"error": {"message": "response_format is not supported", "type": "invalid"}})
                    return
                n = int(body.get("n", 1)) if server.honour_n else 1
                texts = [server.responder(body.get("messages", [])) for _ in range(n)]
                text = texts[0]
                self._send(
                    200,
                    {
                        "id": f"chatcmpl-{len(server.requests)}",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body.get("model", "fake"),
                        "choices": [
                            {"index": i, "message": {"role": "assistant", "content": t}, "finish_reason": "stop"}
                            for i, t in enumerate(texts)
                        ],
                        "usage": {
                            "prompt_tokens": 11,
                            "completion_tokens": len(text.split()),
                            "total_tokens": 11 + len(text.split()),
                        },
                    },
                )

            def _send(self, code: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
