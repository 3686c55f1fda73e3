"""Rate limits against a whole run: failed sessions, wall and the throughput the endpoint's adaptive limit finds.

    python -m bench.rate_limits [--scenarios a b c] [--sessions 1000] [--concurrency 200] [--timeout 2]
                                [--latency-ms 50] [--rate 200] [--burst 20] [--share-429 0.1] [--seed 0]

Each scenario runs the chaos suite's protocol (three calls a session, ``tests/chaos/protocol.py``) through
``voirdire run`` in this process against a lean OpenAI-compatible server in a process of its own (asyncio, HTTP/1.1
keep-alive) that answers after ``--latency-ms``:

=== ===============================================================================================================
a   ``--share-429`` of the requests (seeded) get HTTP 429 with ``Retry-After: 1``, after the same latency
b   a token bucket admits ``--rate`` requests a second (``--burst`` tokens at most); a request beyond it gets 429
    with ``Retry-After: 1`` at once, as a rate limiter answers
c   no faults
=== ===============================================================================================================

The client's HTTP library is voirdire's default (aiohttp) unless ``VOIRDIRE_TRANSPORT=httpx`` is set.

Reported per scenario: failed sessions, wall (from the first request the server got to the last), requests
answered and refused, the endpoint's limit (sampled every 50 ms: its median once settled), and for ``b`` the
sustained throughput of answered requests: their count per second from 2 s after the first request to the moment
90 % of all answered requests were answered (the tail, when fewer sessions are left than the rate needs, is not
the limiter's), beside the bucket's rate. Nothing here leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import multiprocessing
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------------------------------------- the server


def serve(port_out: Any, mode: str, latency_s: float, rate: float, burst: float, share: float, seed: int) -> None:
    """The endpoint (its own process): ``POST .../chat/completions`` answered by ``mode``; ``GET /stats`` gives
    every request's (arrival time, status) by ``time.time()`` and clears them."""
    sys.path.insert(0, str(ROOT))
    from tests.chaos.protocol import replies

    rng = random.Random(seed)
    log: list[tuple[float, int]] = []
    bucket = {"tokens": burst, "at": time.monotonic()}

    def admitted() -> bool:
        now = time.monotonic()
        bucket["tokens"] = min(burst, bucket["tokens"] + (now - bucket["at"]) * rate)
        bucket["at"] = now
        if bucket["tokens"] >= 1:
            bucket["tokens"] -= 1
            return True
        return False

    def response(status: int, body: bytes, extra: str = "") -> bytes:
        reason = {200: "OK", 429: "Too Many Requests", 404: "Not Found"}[status]
        head = f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        return (head + extra + "\r\n").encode() + body

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                length = next((int(h.split(":", 1)[1]) for h in lines if h.lower().startswith("content-length")), 0)
                raw = await reader.readexactly(length) if length else b""
                if lines[0].startswith("GET /stats"):
                    writer.write(response(200, json.dumps(log).encode()))
                    log.clear()
                    await writer.drain()
                    continue
                arrived = time.time()
                if mode == "bucket" and not admitted():
                    status = 429
                else:
                    status = 429 if mode == "share" and rng.random() < share else 200
                    await asyncio.sleep(latency_s)
                log.append((arrived, status))
                if status == 429:
                    err = json.dumps({"error": {"message": "rate limited", "code": "rate_limit_exceeded"}})
                    writer.write(response(429, err.encode(), "Retry-After: 1\r\n"))
                else:
                    messages = json.loads(raw)["messages"]
                    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": replies(messages)},
                                         "finish_reason": "stop"}],
                            "usage": {"prompt_tokens": 10, "completion_tokens": 2}}  # fmt: skip
                    writer.write(response(200, json.dumps(body).encode()))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024)
        port_out.put(server.sockets[0].getsockname()[1])
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def fetch_stats(port: int) -> list[tuple[float, int]]:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", "/stats")
    data = json.loads(conn.getresponse().read())
    conn.close()
    return [(float(t), int(s)) for t, s in data]


# ----------------------------------------------------------------------------------------------- the run


def run_once(port: int, sessions: int, concurrency: int, timeout: float) -> dict[str, Any]:
    from tests.chaos.conftest import questions
    from tests.chaos.protocol import registration
    from voirdire import registry
    from voirdire.cli import main
    from voirdire.models.limiter import endpoint_limits
    from voirdire.registry import plugins

    for module in (registry, plugins):  # the chaos protocol only, as the chaos suite registers it
        module.registrations = lambda: {"chaos": registration}  # type: ignore[attr-defined]
        module.command_plugins = lambda: ()  # type: ignore[attr-defined]
    url = f"http://127.0.0.1:{port}/v1"
    limits: list[tuple[float, int, int]] = []  # (time, limit, in flight)
    done = threading.Event()

    def watch() -> None:  # reads two integers the run's loop writes: a sample, never a decision
        while not done.wait(0.05):
            for label, (limit, in_flight) in list(endpoint_limits().items()):
                if label.startswith(url):
                    limits.append((time.time(), limit, in_flight))

    watcher = threading.Thread(target=watch, daemon=True)
    with tempfile.TemporaryDirectory() as tmp:
        data = questions(Path(tmp) / "qs.jsonl", sessions)
        out = io.StringIO()
        watcher.start()
        started = time.time()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = main(
                ["run", "chaos", "--data", str(data), "--out", str(Path(tmp) / "t.jsonl"), "--json",
                 "--model", f"openai-compatible:chaos@{url}", "--concurrency", str(concurrency),
                 "--timeout", str(timeout), "--max-errors", "100%", "--no-progress"]
            )  # fmt: skip
        ended = time.time()
        done.set()
    payload = json.loads(out.getvalue())
    errors = payload.get("errors") or {}
    failed = errors if isinstance(errors, int) else len(errors)
    return {"exit": code, "failed": failed, "started": started, "ended": ended, "limits": limits,
            "error_sample": next(iter(errors.values()), None) if isinstance(errors, dict) else None}  # fmt: skip


def scenario(name: str, args: argparse.Namespace) -> dict[str, Any]:
    mode = {"a": "share", "b": "bucket", "c": "none"}[name]
    ctx = multiprocessing.get_context("spawn")
    port_q: Any = ctx.Queue()
    server = ctx.Process(
        target=serve,
        args=(port_q, mode, args.latency_ms / 1000, args.rate, args.burst, args.share_429, args.seed),
        daemon=True,
    )
    server.start()
    try:
        port = port_q.get(timeout=60)
        run = run_once(port, args.sessions, args.concurrency, args.timeout)
        log = fetch_stats(port)
    finally:
        server.terminate()
    ok = sorted(t for t, s in log if s == 200)
    refused = sum(1 for _, s in log if s == 429)
    first, last = min(t for t, _ in log), max(t for t, _ in log)
    result: dict[str, Any] = {
        "scenario": name,
        "sessions": args.sessions,
        "concurrency": args.concurrency,
        "timeout_s": args.timeout,
        "failed_sessions": run["failed"],
        "exit": run["exit"],
        "wall_s": round(last - first, 2),
        "run_s": round(run["ended"] - run["started"], 2),
        "answered": len(ok),
        "refused_429": refused,
    }
    settled_from = first + 2.0
    busy_to = ok[int(0.9 * len(ok)) - 1] if ok else last
    steady = [lim for t, lim, _ in run["limits"] if settled_from <= t <= busy_to]
    if steady:
        result["limit_median_settled"] = statistics.median(steady)
        result["limit_range_settled"] = [min(steady), max(steady)]
    if name == "b":
        window = busy_to - settled_from
        answered = sum(1 for t in ok if settled_from <= t <= busy_to)
        result["sustained_per_s"] = round(answered / window, 1) if window > 0 else None
        result["rate"] = args.rate
        result["share_of_rate"] = round(answered / window / args.rate, 3) if window > 0 else None
    if run["error_sample"]:
        result["error_sample"] = run["error_sample"][:300]
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenarios", nargs="+", default=["a", "b", "c"], choices=["a", "b", "c"])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=200)
    parser.add_argument("--timeout", type=float, default=2.0)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--rate", type=float, default=200.0, help="the token bucket's requests a second (b)")
    parser.add_argument("--burst", type=float, default=20.0, help="the token bucket's size (b)")
    parser.add_argument("--share-429", type=float, default=0.1, help="share of requests refused (a)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    results = [scenario(name, args) for name in args.scenarios]
    for r in results:
        print(json.dumps(r), flush=True)
    good = all(r["failed_sessions"] == 0 for r in results) and all(
        (r.get("share_of_rate") or 0) >= 0.8 for r in results if r["scenario"] == "b"
    )
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
