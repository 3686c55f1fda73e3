"""The fake OpenAI-compatible endpoint every driver of the speed benchmark talks to.

A raw ``asyncio.Protocol`` HTTP/1.1 server with keep-alive, kept lean so that it is never the bottleneck: it parses
the request line, the headers and a ``Content-Length`` body, and answers ``POST /v1/chat/completions`` after a fixed
latency (``loop.call_later``, no task per request). It is not the tests' fake server (``tests/fake_openai.py``,
a thread per connection, faults on demand, which the other benches use): at 200 requests in flight that one would
be the bottleneck the speed runs measure. The reply is chosen from the request's messages alone
(``reply_text``), so every driver gets the same conversation; ``n`` choices are returned when ``n`` is asked.

For every request it records the arrival and finish times, the sha256 of the body's bytes, the sha256 of its
canonical form (keys sorted, ``"stream": false`` dropped: the same request whatever the client's key order), the
session (the number in "Claim number N" of the body) and the kind of prompt. Requests are grouped by *phase*:
the harness names the driver it is about to run (``POST /_bench/phase {"name": ...}``) and reads that driver's
records afterwards (``GET /_bench/log?phase=NAME``).

    python -m bench.speed.fake_server --latency-ms 100 [--followups K]

binds 127.0.0.1 on a free port and prints ``PORT <n>`` on its first line of stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import re
import sys
import time
from dataclasses import dataclass, field
from typing import Any

# What the prompts of prompts/cross_examination/*.yaml say, as the server recognises them.
SETUP_MARKS = ("Your goal is to try to verify the correctness of the following claim:", "The claim is: ")
ANSWER_MARK = "Please answer the following questions regarding your claim."
FOLLOWUP_ASK_MARK = "Do you have any follow-up questions? Please answer with Yes or No."
FOLLOWUP_QUESTIONS_MARK = "What are the follow-up questions?"
DECISION_MARK = "Do you think it is correct or incorrect?"
CLAIM_MARKS = ("Please phrase your answer as a claim.", "____")

QUESTIONS = "1. Is the first fact behind the claim true?\n2. Is the second fact behind the claim true?"
FOLLOWUP_QUESTIONS = "1. Is the first follow-up fact true?\n2. Is the second follow-up fact true?"
ANSWER = "Yes, that is true."
DECISION = "The claim is correct."
CLAIM = "The capital of the country is its largest city."

_SESSION = re.compile(rb"Claim number (\d+)")


def reply_text(messages: list[dict[str, Any]], followups: int) -> tuple[str, str]:
    """The reply to a conversation and the kind of prompt it answers.

    The examiner says Yes to the first ``followups`` "Do you have any follow-up questions?" of a conversation
    (counted in its messages) and No after that.
    """
    last = messages[-1] if messages else {}
    text = last.get("content")
    if not isinstance(text, str):  # content parts: [{"type": "text", "text": ...}]
        text = "".join(p.get("text", "") for p in text or [] if isinstance(p, dict))
    if FOLLOWUP_ASK_MARK in text:
        asked = sum(1 for m in messages if m.get("role") == "user" and FOLLOWUP_ASK_MARK in str(m.get("content")))
        return ("Yes." if asked <= followups else "No."), "followup_ask"
    if FOLLOWUP_QUESTIONS_MARK in text:
        return FOLLOWUP_QUESTIONS, "followup_questions"
    if DECISION_MARK in text:
        return DECISION, "decision"
    if text.startswith(ANSWER_MARK):
        return ANSWER, "answer"
    if any(mark in text for mark in SETUP_MARKS):
        return QUESTIONS, "setup"
    if any(mark in text for mark in CLAIM_MARKS):
        return CLAIM, "claim"
    return "OK.", "other"


@dataclass
class Record:
    arrival: float
    finish: float
    digest: str
    canonical: str
    session: int
    kind: str
    body: str | None = None

    def row(self) -> list[Any]:
        row = [round(self.arrival, 6), round(self.finish, 6), self.digest, self.canonical, self.session, self.kind]
        return row if self.body is None else [*row, self.body]


@dataclass
class State:
    latency_s: float
    followups: int
    keep_bodies: bool = False
    phase: str = "default"
    phases: dict[str, list[Record]] = field(default_factory=dict)
    served: int = 0
    connections: dict[str, int] = field(default_factory=dict)
    """Connections accepted in each phase: more than the requests in flight means the client's pool churns."""

    def records(self) -> list[Record]:
        return self.phases.setdefault(self.phase, [])


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


def canonical(request: dict[str, Any]) -> bytes:
    """The request with its keys sorted and ``"stream": false`` (the default) dropped."""
    if request.get("stream") is False:
        request = {k: v for k, v in request.items() if k != "stream"}
    return json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _response(code: int, payload: bytes, keep_alive: bool) -> bytes:
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 411: "Length Required"}.get(code, "Error")
    head = (
        f"HTTP/1.1 {code} {reason}\r\ncontent-type: application/json\r\ncontent-length: {len(payload)}\r\n"
        f"connection: {'keep-alive' if keep_alive else 'close'}\r\n\r\n"
    )
    return head.encode() + payload


def completion(body: dict[str, Any], text: str, served: int, raw_len: int) -> bytes:
    n = body.get("n") or 1
    choice = {"message": {"role": "assistant", "content": text}, "finish_reason": "stop", "logprobs": None}
    words = len(text.split())
    return json.dumps(
        {
            "id": f"chatcmpl-{served}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [{"index": i, **choice} for i in range(int(n))],
            "usage": {"prompt_tokens": raw_len // 4, "completion_tokens": words, "total_tokens": raw_len // 4 + words},
        },
        separators=(",", ":"),
    ).encode()


class HTTPProtocol(asyncio.Protocol):
    """One keep-alive connection; requests on it are answered in order (the latency is the same for all)."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.buffer = b""
        self.transport: asyncio.Transport | None = None
        self.loop = asyncio.get_running_loop()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        connections = self.state.connections
        connections[self.state.phase] = connections.get(self.state.phase, 0) + 1

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buffer[:end].decode("latin-1").split("\r\n")
            headers = {}
            for line in head[1:]:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            length = headers.get("content-length")
            method, _, rest = head[0].partition(" ")
            path = rest.rpartition(" ")[0]
            if length is None and method == "POST":
                self._write(_response(411, b'{"error":{"message":"content-length required"}}', False), close=True)
                return
            size = int(length or 0)
            if len(self.buffer) < end + 4 + size:
                return
            body = self.buffer[end + 4 : end + 4 + size]
            self.buffer = self.buffer[end + 4 + size :]
            keep_alive = headers.get("connection", "").lower() != "close"
            self.handle(method, path, body, keep_alive)

    def _write(self, data: bytes, close: bool = False) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)
            if close:
                self.transport.close()

    def handle(self, method: str, path: str, body: bytes, keep_alive: bool) -> None:
        state = self.state
        if method == "POST" and path.endswith("/chat/completions"):
            arrival = time.time()
            request = json.loads(body)
            text, kind = reply_text(request.get("messages") or [], state.followups)
            state.served += 1
            payload = _response(200, completion(request, text, state.served, len(body)), keep_alive)
            match = _SESSION.search(body)
            session = int(match.group(1)) if match else -1
            kept = body.decode() if state.keep_bodies else None
            record = Record(arrival, 0.0, _digest(body), _digest(canonical(request)), session, kind, kept)
            state.records().append(record)
            self.loop.call_later(state.latency_s, self._finish, record, payload, not keep_alive)
            return
        if path == "/_bench/phase" and method == "POST":
            state.phase = json.loads(body)["name"]
            state.phases[state.phase] = []
            state.connections[state.phase] = 0
            self._write(_response(200, b'{"ok":true}', keep_alive), close=not keep_alive)
            return
        if path.startswith("/_bench/log"):
            phase = path.partition("phase=")[2] or state.phase
            rows = [r.row() for r in state.phases.get(phase, [])]
            log = {"phase": phase, "connections": state.connections.get(phase, 0), "records": rows}
            self._write(_response(200, json.dumps(log).encode(), keep_alive))
            return
        self._write(_response(404, b'{"error":{"message":"not found"}}', keep_alive), close=not keep_alive)

    def _finish(self, record: Record, payload: bytes, close: bool) -> None:
        record.finish = time.time()
        self._write(payload, close)


async def serve(
    latency_s: float, followups: int, port: int = 0, keep_bodies: bool = False
) -> tuple[asyncio.Server, State]:
    """Start the server on 127.0.0.1 (a free port when 0); the caller keeps it running."""
    state = State(latency_s=latency_s, followups=followups, keep_bodies=keep_bodies)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: HTTPProtocol(state), "127.0.0.1", port, backlog=4096)
    return server, state


def bound_port(server: asyncio.Server) -> int:
    return int(server.sockets[0].getsockname()[1])


async def _main(latency_s: float, followups: int, keep_bodies: bool) -> None:
    server, _ = await serve(latency_s, followups, keep_bodies=keep_bodies)
    print(f"PORT {bound_port(server)}", flush=True)
    async with server:
        await server.serve_forever()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="fake OpenAI-compatible endpoint for bench/speed")
    ap.add_argument("--latency-ms", type=float, default=100.0)
    ap.add_argument("--followups", type=int, default=0, help="examiner says Yes to the first K follow-up asks")
    ap.add_argument("--keep-bodies", action="store_true", help="the log also returns every request body (debugging)")
    args = ap.parse_args(argv)
    try:
        asyncio.run(_main(args.latency_ms / 1000, args.followups, args.keep_bodies))
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
