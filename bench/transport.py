"""Micro-benchmark of the OpenAI client alone: CPU per call and wall, per transport, against a lean fake endpoint.

    python bench/transport.py [--requests 5000] [--concurrency 200] [--latency-ms 50] [--repeat 3]
                              [--transports raw,raw-tuned,httpx,aiohttp] [--max-connections 256] [--json FILE]

The endpoint is a raw asyncio HTTP/1.1 keep-alive server in a process of its own that answers every
``POST .../chat/completions`` with the same chat completion after ``--latency-ms``; it counts the connections it
accepted, so pool churn (connections opened and dropped beyond keep-alive) shows. Each transport then runs in a
fresh process of its own (so no run inherits another's connections, caches or garbage), sends ``--requests``
chat requests with ``--concurrency`` in flight, and reports its process CPU time per call and its wall:

=========== ===================================================================================================
raw         a bare driver on ``openai.AsyncOpenAI()`` with the SDK's defaults (its own HTTP pool)
raw-tuned   the same driver on an ``AsyncOpenAI`` given one pool of ``--max-connections`` kept-alive connections
            and a semaphore of as many requests in flight
httpx       voirdire's ``OpenAIChatClient`` (plain POSTs on its own pools) on httpx (``VOIRDIRE_TRANSPORT=httpx``,
            pools of 16: today's path before aiohttp)
aiohttp     the same client on aiohttp (``VOIRDIRE_TRANSPORT=aiohttp``, the default: one connector)
aiohttp-bare  a bare ``aiohttp.ClientSession.post`` of the same body bytes on one connector of
            ``--max-connections``, the reply read and ``json.loads``-ed: aiohttp's own floor, what voirdire's
            client costs above it is the difference
rnet-bare   the same bare POST on rnet (Rust's reqwest on a tokio runtime of its own threads; not a dependency:
            ``pip install rnet``), the CPU of every thread of the process counted
curl-bare   the same on curl_cffi's ``AsyncSession`` (libcurl's multi interface on the event loop; not a
            dependency: ``pip install curl_cffi``)
=========== ===================================================================================================

The voirdire row includes everything voirdire does per call: autogen messages to JSON, the endpoint's
adaptive limiter, the deadline, reply checks and usage bookkeeping. A warm-up of ``--concurrency`` calls runs
before the clock starts, so connection setup is not counted. Results go to stdout as a table and, with
``--json FILE``, as JSON. Nothing here leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TRANSPORTS = ("raw", "raw-tuned", "httpx", "aiohttp", "aiohttp-bare", "rnet-bare", "curl-bare")
OPTIONAL = {"rnet-bare": "rnet", "curl-bare": "curl_cffi"}
"""Transports on libraries voirdire does not depend on: measured where installed (``pip install rnet curl_cffi``)."""
MODEL = "bench-model"
# A short cross-examination turn: the shape (system, user, assistant, user) and size of a real one.
MESSAGES = [
    ("system", "You are an examiner. " * 20),
    (
        "user",
        "Your goal is to verify the correctness of the following claim: " + "The capital of Eritrea is Asmara. " * 8,
    ),
    ("assistant", "1. In which country is Asmara?\n2. Is Asmara the seat of government?\n3. Since when?"),
    ("user", "Do you have any follow-up questions? Please answer with Yes or No."),
]


# ------------------------------------------------------------------------------------------------ the endpoint


def reply_bytes() -> bytes:
    body = json.dumps(
        {
            "id": "chatcmpl-bench",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": MODEL,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "No. Based on the answers, the claim is correct."},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 212, "completion_tokens": 11, "total_tokens": 223},
        }
    ).encode()
    head = (
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: keep-alive\r\n"
        f"content-length: {len(body)}\r\n\r\n"
    ).encode()
    return head + body


def serve(port_file: Path, latency_s: float) -> None:
    """Answer chat completions after ``latency_s`` on keep-alive connections; ``GET /stats`` gives the counts."""
    reply = reply_bytes()
    stats = {"connections": 0, "requests": 0, "in_flight": 0, "max_in_flight": 0}

    class Conn(asyncio.Protocol):
        def __init__(self) -> None:
            self.buf = b""
            self.transport: asyncio.Transport | None = None

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            self.transport = transport  # type: ignore[assignment]
            stats["connections"] += 1

        def data_received(self, data: bytes) -> None:
            self.buf += data
            while True:
                end = self.buf.find(b"\r\n\r\n")
                if end < 0:
                    return
                head = self.buf[:end].decode("latin-1")
                length = 0
                for line in head.split("\r\n")[1:]:
                    name, _, value = line.partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value)
                if len(self.buf) < end + 4 + length:
                    return
                self.buf = self.buf[end + 4 + length :]
                if head.startswith("GET /stats"):
                    body = json.dumps(stats).encode()
                    stats["max_in_flight"] = stats["in_flight"]  # each run's own peak, from the last look on
                    assert self.transport is not None
                    self.transport.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))
                    continue
                stats["requests"] += 1
                stats["in_flight"] += 1
                stats["max_in_flight"] = max(stats["max_in_flight"], stats["in_flight"])
                asyncio.get_running_loop().call_later(latency_s, self.answer)

        def answer(self) -> None:
            stats["in_flight"] -= 1
            if self.transport is not None and not self.transport.is_closing():
                self.transport.write(reply)

    async def main() -> None:
        server = await asyncio.get_running_loop().create_server(Conn, "127.0.0.1", 0, backlog=4096)
        port_file.write_text(str(server.sockets[0].getsockname()[1]))
        await server.serve_forever()

    asyncio.run(main())


def server_stats(url: str) -> dict[str, int]:
    import urllib.request

    with urllib.request.urlopen(url.replace("/v1", "/stats"), timeout=5) as answer:  # 127.0.0.1 only
        return json.loads(answer.read())  # type: ignore[no-any-return]


# ------------------------------------------------------------------------------------------------ the drivers


async def drive(transport: str, url: str, requests: int, concurrency: int, max_connections: int) -> dict[str, Any]:
    """Send ``requests`` chat requests, ``concurrency`` in flight, through ``transport``; CPU and wall of that."""
    send = await make_sender(transport, url, max_connections)
    left = requests

    async def worker() -> None:
        nonlocal left
        while left > 0:
            left -= 1
            await send()

    await asyncio.gather(*(send() for _ in range(concurrency)))  # warm-up: the connections are open
    cpu0, wall0 = time.process_time(), time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    return {"cpu_ms_per_call": 1000 * cpu / requests, "wall_s": wall, "calls_per_s": requests / wall}


async def make_sender(transport: str, url: str, max_connections: int) -> Any:
    if transport in ("raw", "raw-tuned"):
        import openai

        dicts = [{"role": role, "content": text} for role, text in MESSAGES]
        if transport == "raw":
            client = openai.AsyncOpenAI(base_url=url, api_key="bench-key")
            gate: asyncio.Semaphore | None = None
        else:
            import httpx2

            limits = httpx2.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
            http = httpx2.AsyncClient(limits=limits, timeout=httpx2.Timeout(30.0, connect=10.0))
            client = openai.AsyncOpenAI(base_url=url, api_key="bench-key", max_retries=0, http_client=http)
            gate = asyncio.Semaphore(max_connections)

        async def raw() -> None:
            if gate is None:
                reply = await client.chat.completions.create(
                    model=MODEL,
                    messages=dicts,
                    max_tokens=256,
                    temperature=0.0,  # type: ignore[arg-type]
                )
            else:
                async with gate:
                    reply = await client.chat.completions.create(
                        model=MODEL,
                        messages=dicts,
                        max_tokens=256,
                        temperature=0.0,  # type: ignore[arg-type]
                    )
            assert reply.choices[0].message.content

        return raw

    if transport == "aiohttp-bare":
        return await bare_aiohttp(url, max_connections)
    if transport in OPTIONAL:
        return await bare_compiled(transport, url, max_connections)

    from autogen_core.models import AssistantMessage, SystemMessage, UserMessage

    from voirdire.models.openai import OpenAIChatClient

    os.environ["VOIRDIRE_MAX_CONNECTIONS"] = str(max_connections)
    os.environ["VOIRDIRE_TRANSPORT"] = transport
    messages = [
        SystemMessage(content=text)
        if role == "system"
        else AssistantMessage(content=text, source="examiner")
        if role == "assistant"
        else UserMessage(content=text, source="moderator")
        for role, text in MESSAGES
    ]
    ours = OpenAIChatClient(MODEL, base_url=url, api_key="bench-key")
    args = {"max_tokens": 256, "temperature": 0.0, "timeout": 30.0}

    async def voirdire() -> None:
        done = await ours.complete(messages, args)
        assert done.texts[0]

    return voirdire


async def bare_aiohttp(url: str, max_connections: int) -> Any:
    """aiohttp alone: one session on one connector, a POST of the request's bytes, the body read and parsed."""
    import aiohttp

    body, headers = _bare_body()
    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=max_connections, limit_per_host=0))
    target = url.rstrip("/") + "/chat/completions"

    async def bare() -> None:
        async with session.post(target, data=body, headers=headers) as response:
            reply = json.loads(await response.read())
        assert reply["choices"][0]["message"]["content"]

    return bare


def _bare_body() -> tuple[bytes, dict[str, str]]:
    body = json.dumps(
        {"model": MODEL, "messages": [{"role": r, "content": t} for r, t in MESSAGES], "max_tokens": 256,
         "temperature": 0.0},
        ensure_ascii=False, separators=(",", ":"),
    ).encode()  # fmt: skip
    return body, {"Authorization": "Bearer bench-key", "Content-Type": "application/json", "Accept": "application/json"}


async def bare_compiled(transport: str, url: str, max_connections: int) -> Any:
    """A bare POST on a client whose HTTP is not Python (rnet: Rust; curl_cffi: libcurl), as ``bare_aiohttp``'s:
    the request's bytes, no redirect followed, the body read and parsed; requests in flight capped at
    ``max_connections`` (as aiohttp's connector caps them)."""
    body, headers = _bare_body()
    target = url.rstrip("/") + "/chat/completions"
    gate = asyncio.Semaphore(max_connections)
    if transport == "rnet-bare":
        import rnet

        client = rnet.Client(allow_redirects=False)

        async def bare() -> None:
            async with gate:
                response = await client.post(target, body=body, headers=headers)
                reply = json.loads(await response.bytes())
            assert reply["choices"][0]["message"]["content"]

        return bare
    from curl_cffi.requests import AsyncSession

    session = AsyncSession(max_clients=max_connections, allow_redirects=False)

    async def bare_curl() -> None:
        async with gate:
            response = await session.post(target, data=body, headers=headers)
            reply = json.loads(response.content)
        assert reply["choices"][0]["message"]["content"]

    return bare_curl


# ------------------------------------------------------------------------------------------------ orchestration


def run_client(transport: str, url: str, args: argparse.Namespace) -> dict[str, Any]:
    command = [
        sys.executable, __file__, "--client", transport, "--url", url, "--requests", str(args.requests),
        "--concurrency", str(args.concurrency), "--max-connections", str(args.max_connections),
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode:
        raise SystemExit(f"{transport}: exit {done.returncode}\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=200)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--max-connections", type=int, default=256, help="per endpoint (VOIRDIRE_MAX_CONNECTIONS)")
    parser.add_argument("--transports", default=",".join(t for t in TRANSPORTS if t not in OPTIONAL))
    parser.add_argument("--repeat", type=int, default=3, help="runs of each transport, interleaved")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--client", choices=TRANSPORTS, help=argparse.SUPPRESS)  # one run, in this process
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)  # the endpoint, in this process
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.latency_ms / 1000)
        return
    if args.client:
        result = asyncio.run(drive(args.client, args.url, args.requests, args.concurrency, args.max_connections))
        print(json.dumps(result))
        return

    transports = [t.strip() for t in args.transports.split(",") if t.strip()]
    for t in transports:
        if t not in TRANSPORTS:
            parser.error(f"--transports: unknown transport {t!r} (known: {', '.join(TRANSPORTS)})")
        if t in OPTIONAL and importlib.util.find_spec(OPTIONAL[t]) is None:
            parser.error(f"--transports: {t} needs {OPTIONAL[t]}, not installed here (pip install {OPTIONAL[t]})")
    port_file = Path(f"/tmp/voirdire-bench-transport-{os.getpid()}.port")
    port_file.unlink(missing_ok=True)
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(port_file), "--latency-ms", str(args.latency_ms)]
    )
    try:
        for _ in range(100):
            if port_file.exists() and port_file.read_text():
                break
            time.sleep(0.05)
        url = f"http://127.0.0.1:{port_file.read_text()}/v1"
        runs: dict[str, list[dict[str, Any]]] = {t: [] for t in transports}
        for _ in range(args.repeat):
            for transport in transports:  # interleaved, so a noisy neighbour hurts every transport alike
                before = server_stats(url)
                result = run_client(transport, url, args)
                after = server_stats(url)
                result["connections"] = after["connections"] - before["connections"]
                result["max_in_flight"] = after["max_in_flight"]
                runs[transport].append(result)
                print(f"  {transport:9} {json.dumps(result)}", file=sys.stderr)
    finally:
        server.terminate()
        server.wait()
        port_file.unlink(missing_ok=True)

    print(
        f"\n{args.requests} requests, {args.concurrency} in flight, {args.latency_ms:g} ms latency, "
        f"max_connections {args.max_connections}; median of {args.repeat} (min-max)\n"
    )
    print("| transport | CPU ms/call | wall s | calls/s | connections opened |")
    print("|---|---|---|---|---|")
    summary: dict[str, Any] = {}
    for transport, results in runs.items():
        cpu = [r["cpu_ms_per_call"] for r in results]
        wall = [r["wall_s"] for r in results]
        conns = [r["connections"] for r in results]
        summary[transport] = {
            "cpu_ms_per_call": statistics.median(cpu),
            "wall_s": statistics.median(wall),
            "runs": results,
        }
        print(
            f"| {transport} | {statistics.median(cpu):.2f} ({min(cpu):.2f}-{max(cpu):.2f}) "
            f"| {statistics.median(wall):.2f} ({min(wall):.2f}-{max(wall):.2f}) "
            f"| {args.requests / statistics.median(wall):.0f} | {max(conns)} |"
        )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "command": " ".join(sys.argv),
                    "machine": f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
                    "requests": args.requests,
                    "concurrency": args.concurrency,
                    "latency_ms": args.latency_ms,
                    "max_connections": args.max_connections,
                    "results": summary,
                },
                indent=2,
            )
            + "\n"
        )


if __name__ == "__main__":
    main()
