"""Micro-benchmark of the native provider clients: CPU per call against a lean fake endpoint, voirdire's clients
beside the providers' official SDKs (when installed).

    python bench/providers.py [--requests 3000] [--concurrency 100] [--latency-ms 20] [--repeat 3] [--json FILE]

The endpoint is a raw asyncio HTTP/1.1 keep-alive server in a process of its own that answers ``POST
/v1/chat/completions`` (OpenAI), ``POST /v1/messages`` (Anthropic) and ``POST /api/chat`` (Ollama) with a fixed
reply of each API's shape after ``--latency-ms``. Each driver runs in a fresh process, sends the same four-turn
conversation (system, user, assistant, user; about 1.3 kB) ``--requests`` times with ``--concurrency`` in flight
after a warm-up of one call per slot, and reports its process CPU per call and its wall:

================= ============================================================================================
openai            voirdire's ``OpenAIChatClient`` (the reference: docs/transport.md)
anthropic         voirdire's ``AnthropicClient`` (``anthropic:``)
ollama            voirdire's ``OllamaClient`` (``ollama:``)
anthropic-sdk     ``anthropic.AsyncAnthropic().messages.create`` (retries off, a pool of ``--concurrency``)
ollama-sdk        ``ollama.AsyncClient().chat``
================= ============================================================================================

The SDK rows run only where the SDK is installed. Nothing here leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DRIVERS = ("openai", "anthropic", "ollama", "anthropic-sdk", "ollama-sdk")
MODEL = "bench-model"
TEXT = "No. Based on the answers, the claim is correct."
MESSAGES = [
    ("system", "You are an examiner. " * 20),
    ("user", "Your goal is to verify the correctness of the following claim: " + "Asmara is in Eritrea. " * 8),
    ("assistant", "1. In which country is Asmara?\n2. Is Asmara the seat of government?\n3. Since when?"),
    ("user", "Do you have any follow-up questions? Please answer with Yes or No."),
]
REPLIES = {
    "/v1/chat/completions": {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "model": MODEL,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": TEXT}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 212, "completion_tokens": 11, "total_tokens": 223},
    },
    "/v1/messages": {
        "id": "msg_bench",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [{"type": "text", "text": TEXT}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 212, "output_tokens": 11},
    },
    "/api/chat": {
        "model": MODEL,
        "created_at": "2025-01-01T00:00:00Z",
        "message": {"role": "assistant", "content": TEXT},
        "done": True,
        "done_reason": "stop",
        "prompt_eval_count": 212,
        "eval_count": 11,
    },
}


def serve(port_file: Path, latency_s: float) -> None:
    """Answer each API's path with its fixed reply after ``latency_s``, on keep-alive connections."""
    replies = {}
    for path, payload in REPLIES.items():
        body = json.dumps(payload).encode()
        head = f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
        replies[path.encode()] = head.encode() + body

    class Conn(asyncio.Protocol):
        def __init__(self) -> None:
            self.buf = b""
            self.transport: asyncio.Transport | None = None

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            self.transport = transport  # type: ignore[assignment]

        def data_received(self, data: bytes) -> None:
            self.buf += data
            while (end := self.buf.find(b"\r\n\r\n")) >= 0:
                head = self.buf[:end].decode("latin-1")
                length = 0
                for line in head.split("\r\n")[1:]:
                    name, _, value = line.partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value)
                if len(self.buf) < end + 4 + length:
                    return
                self.buf = self.buf[end + 4 + length :]
                path = head.split(" ", 2)[1].encode()
                asyncio.get_running_loop().call_later(latency_s, self.answer, replies[path])

        def answer(self, reply: bytes) -> None:
            if self.transport is not None and not self.transport.is_closing():
                self.transport.write(reply)

    async def main() -> None:
        server = await asyncio.get_running_loop().create_server(Conn, "127.0.0.1", 0, backlog=4096)
        port_file.write_text(str(server.sockets[0].getsockname()[1]))
        await server.serve_forever()

    asyncio.run(main())


async def make_sender(driver: str, url: str, concurrency: int) -> Any:
    dicts = [{"role": role, "content": text} for role, text in MESSAGES]
    if driver == "anthropic-sdk":
        import anthropic
        import httpx2 as httpx

        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        http = httpx.AsyncClient(limits=limits)
        sdk = anthropic.AsyncAnthropic(base_url=url, api_key="bench-key", max_retries=0, http_client=http)

        async def send_anthropic() -> None:
            reply = await sdk.messages.create(
                model=MODEL, max_tokens=256, system=dicts[0]["content"], messages=dicts[1:]
            )
            assert reply.content[0].text  # type: ignore[union-attr]

        return send_anthropic
    if driver == "ollama-sdk":
        import ollama

        client = ollama.AsyncClient(host=url)

        async def send_ollama() -> None:
            reply = await client.chat(model=MODEL, messages=dicts, options={"temperature": 0.0, "num_predict": 256})
            assert reply.message.content

        return send_ollama

    from autogen_core.models import AssistantMessage, SystemMessage, UserMessage

    from voirdire.models.anthropic import AnthropicClient
    from voirdire.models.ollama import OllamaClient
    from voirdire.models.openai import OpenAIChatClient

    messages = [
        SystemMessage(content=text)
        if role == "system"
        else AssistantMessage(content=text, source="examiner")
        if role == "assistant"
        else UserMessage(content=text, source="moderator")
        for role, text in MESSAGES
    ]
    ours: Any
    if driver == "openai":
        ours = OpenAIChatClient(MODEL, base_url=f"{url}/v1", api_key="bench-key")
    elif driver == "anthropic":
        ours = AnthropicClient(MODEL, api_key="bench-key", base=url)
    else:
        ours = OllamaClient(MODEL, url=url)
    args = {"max_tokens": 256, "temperature": 0.0, "timeout": 30.0}

    async def send() -> None:
        done = await ours.complete(messages, args)
        assert done.texts[0]

    return send


async def drive(driver: str, url: str, requests: int, concurrency: int) -> dict[str, float]:
    send = await make_sender(driver, url, concurrency)
    left = requests

    async def worker() -> None:
        nonlocal left
        while left > 0:
            left -= 1
            await send()

    await asyncio.gather(*(send() for _ in range(concurrency)))
    cpu0, wall0 = time.process_time(), time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    return {"cpu_ms_per_call": 1000 * cpu / requests, "wall_s": wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--drivers", default=",".join(DRIVERS))
    parser.add_argument("--json", type=Path)
    parser.add_argument("--client", choices=DRIVERS, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.latency_ms / 1000)
        return
    if args.client:
        print(json.dumps(asyncio.run(drive(args.client, args.url, args.requests, args.concurrency))))
        return
    sdks = {"anthropic-sdk": "anthropic", "ollama-sdk": "ollama"}
    drivers = [
        d
        for d in (d.strip() for d in args.drivers.split(","))
        if d and (d not in sdks or importlib.util.find_spec(sdks[d]) is not None)
    ]
    port_file = Path(f"/tmp/voirdire-bench-providers-{os.getpid()}.port")
    port_file.unlink(missing_ok=True)
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(port_file), "--latency-ms", str(args.latency_ms)]
    )
    runs: dict[str, list[dict[str, float]]] = {d: [] for d in drivers}
    try:
        for _ in range(100):
            if port_file.exists() and port_file.read_text():
                break
            time.sleep(0.05)
        url = f"http://127.0.0.1:{port_file.read_text()}"
        for _ in range(args.repeat):
            for driver in drivers:  # interleaved: a noisy neighbour hurts every driver alike
                command = [
                    sys.executable, __file__, "--client", driver, "--url", url,
                    "--requests", str(args.requests), "--concurrency", str(args.concurrency),
                ]  # fmt: skip
                done = subprocess.run(
                    command, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False
                )
                if done.returncode:
                    raise SystemExit(f"{driver}: exit {done.returncode}\n{done.stderr[-3000:]}")
                runs[driver].append(json.loads(done.stdout.strip().splitlines()[-1]))
                print(f"  {driver:14} {runs[driver][-1]}", file=sys.stderr)
    finally:
        server.terminate()
        server.wait()
        port_file.unlink(missing_ok=True)
    print(
        f"\n{args.requests} requests, {args.concurrency} in flight, {args.latency_ms:g} ms latency; "
        f"median of {args.repeat} (min-max)\n"
    )
    print("| driver | CPU ms/call | wall s |")
    print("|---|---|---|")
    summary = {}
    for driver, results in runs.items():
        cpu = [r["cpu_ms_per_call"] for r in results]
        wall = [r["wall_s"] for r in results]
        summary[driver] = {"cpu_ms_per_call": statistics.median(cpu), "wall_s": statistics.median(wall)}
        print(
            f"| {driver} | {statistics.median(cpu):.2f} ({min(cpu):.2f}-{max(cpu):.2f}) "
            f"| {statistics.median(wall):.2f} ({min(wall):.2f}-{max(wall):.2f}) |"
        )
    if args.json:
        args.json.write_text(json.dumps({"command": " ".join(sys.argv), "results": summary}, indent=2) + "\n")


if __name__ == "__main__":
    main()
