"""The fake OpenAI-compatible endpoint of the tests, on 127.0.0.1, that misbehaves when asked to: the chaos suite's
server, and under ``tests.fake_openai.FakeOpenAIServer`` every other test's.

Each request is given a fault by ``plan(index, body)``: ``ok`` answers like a chat-completions server, and the
others are what real endpoints do on a bad day:

========== =========================================================================================
ok         HTTP 200, a chat completion whose text is ``responder(messages)``
hang       reads the request and never answers (until the server shuts down)
429        HTTP 429 with ``Retry-After: <retry_after>`` (seconds or an HTTP date; a callable is asked each time)
500        HTTP 500 with a JSON error
400        HTTP 400 with a JSON error (a request the server does not support)
truncated  HTTP 200 whose body stops half-way (Content-Length promises more, then the socket closes)
cut_json   HTTP 200 whose body is complete as sent but holds half a JSON document
drop       reads the request and closes the connection without a response
garbage    HTTP 200, ``application/json``, bytes that are not JSON
wrong_json HTTP 200 with JSON that is not a chat completion
empty      HTTP 200 with a chat completion that has no choices
401        HTTP 401 (a bad key)
403        HTTP 403 (a content filter refusing this prompt)
========== =========================================================================================

``echo_auth`` puts the request's ``Authorization`` header (and its base64 form, and every byte of it percent-encoded
in upper and lower case) into error messages and
replies, the way a careless server echoes a key: the secrets tests plant keys and look for them everywhere.
Every request is logged (arrival time, headers, body, fault) in ``log``.
"""

from __future__ import annotations

import base64
import json
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Responder = Callable[[list[dict[str, Any]]], str]
Plan = Callable[[int, dict[str, Any]], str]

FAULTS = ("ok", "hang", "429", "500", "400", "truncated", "cut_json", "drop", "garbage", "wrong_json", "empty")


def at_rates(rates: Mapping[str, float], seed: int = 0) -> Plan:
    """Each request draws its fault independently: ``rates`` maps a fault to its probability, the rest is ``ok``."""
    unknown = set(rates) - set(FAULTS)
    if unknown:
        raise ValueError(f"unknown faults {sorted(unknown)}")
    rng = random.Random(seed)
    lock = threading.Lock()

    def plan(index: int, body: dict[str, Any]) -> str:
        with lock:
            x = rng.random()
        for fault, p in rates.items():
            if x < p:
                return fault
            x -= p
        return "ok"

    return plan


def in_order(faults: Sequence[str]) -> Plan:
    """The first requests get ``faults`` in order; every later one is ``ok``."""
    return lambda index, body: faults[index] if index < len(faults) else "ok"


@dataclass
class Logged:
    time: float
    path: str
    headers: dict[str, str]  # names in lower case
    body: dict[str, Any]
    fault: str
    extra: dict[str, Any] = field(default_factory=dict)


class ChaosServer:
    """``POST /v1/chat/completions`` with a fault per request; use as a context manager."""

    def __init__(
        self,
        responder: Responder,
        plan: Plan | None = None,
        *,
        retry_after: str | Callable[[], str] = "1",
        echo_auth: bool = False,
        hang_s: float = 60.0,
        honour_n: bool = True,
    ) -> None:
        """``honour_n=False``: one choice whatever ``n`` asks, as servers that ignore it."""
        self.responder = responder
        self.plan = plan or in_order(())
        self.retry_after = retry_after
        self.echo_auth = echo_auth
        self.hang_s = hang_s
        self.honour_n = honour_n
        self.log: list[Logged] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real servers: a dropped connection is then a real case

            def log_message(self, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {}
                with server._lock:
                    index = len(server.log)
                    chat = self.path.partition("?")[0].endswith("/chat/completions")  # a query string kept
                    fault = server.plan(index, body) if chat else "404"
                    headers = {k.lower(): v for k, v in self.headers.items()}
                    server.log.append(Logged(time.monotonic(), self.path, headers, body, fault))
                getattr(self, "_" + fault.replace("404", "not_found"))(body)

            # ---------------------------------------------------------------- faults
            def _ok(self, body: dict[str, Any]) -> None:
                n = int(body.get("n", 1)) if server.honour_n else 1
                texts = [server.responder(body.get("messages", [])) for _ in range(n)]
                if server.echo_auth:
                    texts = [f"{t} (seen: {self._auth()})" for t in texts]
                self._json(200, completion(body, texts))

            def _hang(self, body: dict[str, Any]) -> None:
                server._stop.wait(server.hang_s)
                self.close_connection = True

            def _429(self, body: dict[str, Any]) -> None:
                wait = server.retry_after if isinstance(server.retry_after, str) else server.retry_after()
                error = {"message": "rate limited" + self._echo(), "type": "rate_limit", "code": None}
                self._json(429, {"error": error}, headers={"Retry-After": wait})

            def _500(self, body: dict[str, Any]) -> None:
                self._json(500, {"error": {"message": "internal error" + self._echo(), "type": "server_error"}})

            def _400(self, body: dict[str, Any]) -> None:
                self._json(400, {"error": {"message": "not supported by this server", "type": "invalid_request"}})

            def _truncated(self, body: dict[str, Any]) -> None:
                data = json.dumps(completion(body, [server.responder(body.get("messages", []))])).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                self.close_connection = True

            def _cut_json(self, body: dict[str, Any]) -> None:
                data = json.dumps(completion(body, [server.responder(body.get("messages", []))])).encode()
                self._raw(200, data[: len(data) // 2], "application/json")

            def _drop(self, body: dict[str, Any]) -> None:
                self.close_connection = True  # no status line: the client sees the peer hang up

            def _garbage(self, body: dict[str, Any]) -> None:
                self._raw(200, b"\x00\xff<<not json>>" + self._echo().encode(), "application/json")

            def _wrong_json(self, body: dict[str, Any]) -> None:
                self._json(200, {"hello": "world", "note": self._echo()})

            def _empty(self, body: dict[str, Any]) -> None:
                self._json(200, completion(body, []))

            def _not_found(self, body: dict[str, Any]) -> None:
                self._json(404, {"error": {"message": "not found"}})

            def _401(self, body: dict[str, Any]) -> None:
                self._json(401, {"error": {"message": "invalid key"}})

            def _403(self, body: dict[str, Any]) -> None:
                self._json(403, {"error": {"message": "the content filter refused this prompt"}})

            # ---------------------------------------------------------------- plumbing
            def _auth(self) -> str:
                auth = self.headers.get("Authorization", "")
                every_byte = "".join(f"%{b:02X}" for b in auth.encode())  # percent-encoded byte by byte
                return f"{auth} / {base64.b64encode(auth.encode()).decode()} / {every_byte} / {every_byte.lower()}"

            def _echo(self) -> str:
                return f" (key seen: {self._auth()})" if server.echo_auth else ""

            def _json(self, code: int, payload: dict[str, Any], headers: Mapping[str, str] | None = None) -> None:
                self._raw(code, json.dumps(payload).encode(), "application/json", headers)

            def _raw(self, code: int, data: bytes, ctype: str, headers: Mapping[str, str] | None = None) -> None:
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def faults(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for entry in self.log:
            out[entry.fault] = out.get(entry.fault, 0) + 1
        return out

    def __enter__(self) -> ChaosServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()  # hung handlers return
        self._httpd.shutdown()
        self._httpd.server_close()


def completion(body: dict[str, Any], texts: Sequence[str]) -> dict[str, Any]:
    """A chat completion of ``texts``: 11 prompt tokens, the first text's words as its completion tokens."""
    used = len(texts[0].split()) if texts else 0
    return {
        "id": "chatcmpl-chaos",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "chaos"),
        "choices": [
            {"index": i, "message": {"role": "assistant", "content": t}, "finish_reason": "stop"}
            for i, t in enumerate(texts)
        ],
        "usage": {"prompt_tokens": 11, "completion_tokens": used, "total_tokens": 11 + used},
    }
