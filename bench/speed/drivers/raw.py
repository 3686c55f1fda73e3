"""The bare driver on ``openai.AsyncOpenAI``: the examination of ``bench.speed.examination`` and nothing else.

One client for both roles (voirdire shares one client between roles with the same spec), no retries, and the
keyword arguments in the order voirdire's ``OpenAIChatClient`` builds its request body (model, messages,
max_tokens, temperature, seed), so the JSON bodies can be byte-identical to voirdire's.

The SDK's own connection pool keeps at most 100 idle connections: with more requests than that in flight, a
connection is closed after its reply and a new one opened for a later request (the endpoint's connection count
shows it). ``--keepalive N`` (the ``raw-tuned`` driver of the harness) gives the client a pool that keeps N.

    python -m bench.speed.drivers.raw --base-url http://127.0.0.1:PORT/v1 --claims claims.jsonl --concurrency 200
"""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from typing import Any

from bench.speed.drivers.common import main
from bench.speed.examination import MAX_TOKENS, Call, Message

MODEL = "fake"


def make_call(args: argparse.Namespace) -> tuple[Call, Callable[[], Awaitable[None]]]:
    import openai

    http_client = None
    if getattr(args, "keepalive", 0):
        try:
            import httpx2 as httpx  # what openai 3.x is built on
        except ImportError:  # pragma: no cover - openai 1.x/2.x
            import httpx  # type: ignore[no-redef]
        limits = httpx.Limits(max_connections=max(1000, args.keepalive), max_keepalive_connections=args.keepalive)
        http_client = openai.DefaultAsyncHttpxClient(limits=limits)
    client = openai.AsyncOpenAI(
        base_url=args.base_url,
        api_key="not-needed",
        max_retries=0,
        timeout=openai.Timeout(30.0, connect=10.0),
        http_client=http_client,
    )

    async def call(messages: list[Message], temperature: float, seed: int | None) -> str:
        body: dict[str, Any] = {
            "model": MODEL,
            "messages": messages,
            "max_tokens": MAX_TOKENS,
            "temperature": temperature,
        }
        if seed is not None:
            body["seed"] = seed
        response = await client.chat.completions.create(**body)
        return response.choices[0].message.content or ""

    return call, client.close


def add_options(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--keepalive", type=int, default=0, help="idle connections the pool keeps (0: the SDK's 100)")


if __name__ == "__main__":
    main("bare driver on openai.AsyncOpenAI", make_call, add_options=add_options)
