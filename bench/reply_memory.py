"""Peak memory of voirdire's model client against servers that send far more than a reply can hold.

    python -m bench.reply_memory [--mb 300] [--replies 4] [--endless-s 10] [--provider openai]

Two scenarios, each in a fresh client process whose peak resident set (``ru_maxrss``) is reported beside its
resident set before the first request (imports and the event loop):

- ``--replies`` requests at once, each answered with a JSON reply of ``--mb`` MB (a Content-Length body whose text
  never ends before the body does): a server that ignores ``max_tokens``;
- requests for ``--endless-s`` seconds, one after another, each answered with a chunked body that never ends.

The server is a process of its own (so its buffers are not counted) on 127.0.0.1 and sends as fast as the client
reads. The reply cap is the default ``VOIRDIRE_MAX_REPLY_CHARS`` unless the environment sets one. Nothing here
leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import multiprocessing
import resource
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

OPENING = b'{"choices":[{"message":{"role":"assistant","content":"'
CLOSING = b'"},"finish_reason":"stop"}]}'
BLOCK = b"x" * 1_048_576


def serve(port_out: Any, mb: int) -> None:
    """The flooding server: ``/big/...`` answers ``mb`` MB with a Content-Length, anything else an endless body."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            return None

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            try:
                if self.path.startswith("/big"):
                    size = mb * 1_048_576
                    self.send_header("Content-Length", str(size))
                    self.end_headers()
                    self.wfile.write(OPENING)
                    left = size - len(OPENING) - len(CLOSING)
                    while left > 0:
                        self.wfile.write(BLOCK[: min(left, len(BLOCK))])
                        left -= len(BLOCK)
                    self.wfile.write(CLOSING)
                else:
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    for data in itertools.chain([OPENING], itertools.repeat(BLOCK)):
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            except OSError:  # the client hung up
                self.close_connection = True

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    port_out.put(server.server_address[1])
    server.serve_forever()


def rss_mb() -> float:
    """This process's resident set now, from /proc (Linux)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 1_048_576


def client_run(url: str, scenario: str, replies: int, endless_s: float, out: Any) -> None:
    """One scenario in this (fresh) process: the calls' outcomes, RSS before, peak RSS."""
    from autogen_core.models import UserMessage

    from voirdire.models.openai import OpenAIChatClient, reply_byte_cap

    ask = [UserMessage(content="q", source="user")]

    async def main() -> dict[str, Any]:
        before = rss_mb()
        outcomes: list[str] = []
        if scenario == "big":
            client = OpenAIChatClient("m", base_url=f"{url}/big/v1", api_key="k", timeout=120)
            done = await asyncio.gather(*(client.complete(ask, {}) for _ in range(replies)), return_exceptions=True)
            outcomes = [type(d).__name__ for d in done]
        else:
            client = OpenAIChatClient("m", base_url=f"{url}/endless/v1", api_key="k", timeout=120)
            end = time.monotonic() + endless_s
            while time.monotonic() < end:
                try:
                    await client.complete(ask, {})
                    outcomes.append("reply")
                except Exception as exc:
                    outcomes.append(type(exc).__name__)
        await client.close()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        counts = {name: outcomes.count(name) for name in sorted(set(outcomes))}
        return {"scenario": scenario, "rss_before_mb": round(before, 1), "peak_rss_mb": round(peak, 1),
                "outcomes": counts, "cap_bytes": reply_byte_cap(1)}  # fmt: skip

    out.put(asyncio.run(main()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, default=300, help="size of each big reply in MB (default 300)")
    parser.add_argument("--replies", type=int, default=4, help="big replies at once (default 4)")
    parser.add_argument("--endless-s", type=float, default=10.0, help="seconds of endless bodies (default 10)")
    args = parser.parse_args(argv)
    ctx = multiprocessing.get_context("spawn")
    port: Any = ctx.Queue()
    server = ctx.Process(target=serve, args=(port, args.mb), daemon=True)
    server.start()
    url = f"http://127.0.0.1:{port.get(timeout=30)}"
    results = []
    try:
        for scenario in ("big", "endless"):
            out: Any = ctx.Queue()
            proc = ctx.Process(target=client_run, args=(url, scenario, args.replies, args.endless_s, out))
            started = time.monotonic()
            proc.start()
            result = out.get(timeout=600)
            proc.join()
            result["wall_s"] = round(time.monotonic() - started, 1)
            results.append(result)
    finally:
        server.terminate()
    for r in results:
        what = f"{args.replies} × {args.mb} MB replies at once" if r["scenario"] == "big" else (
            f"endless bodies for {args.endless_s:g} s")  # fmt: skip
        print(f"{what:<34} peak RSS {r['peak_rss_mb']:7.1f} MB (before the first request {r['rss_before_mb']} MB); "
              f"outcomes {r['outcomes']}; read cap {r['cap_bytes']:,} bytes a reply; {r['wall_s']} s")  # fmt: skip
    print(json.dumps(results), file=sys.stderr)
    return 0 if all(r["peak_rss_mb"] < 300 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
