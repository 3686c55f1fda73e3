"""The bare driver on ``openai.AsyncOpenAI``: the examination of ``bench.speed.examination`` and nothing else.

One client for both roles (voirdire shares one client between roles with the same spec), the SDK's own connection
pool, no retries, and the keyword arguments in the order voirdire's ``OpenAIChatClient`` builds its request body
(model, messages, max_tokens, temperature, seed), so the JSON bodies can be byte-identical to voirdire's.

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

    client = openai.AsyncOpenAI(
        base_url=args.base_url, api_key="not-needed", max_retries=0, timeout=openai.Timeout(30.0, connect=10.0)
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


if __name__ == "__main__":
    main("bare driver on openai.AsyncOpenAI", make_call)
