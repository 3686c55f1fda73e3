"""The bare driver on autogen's ``OpenAIChatCompletionClient`` (autogen-ext), the client autogen users start from.

"fake" is no model autogen knows, so its ``model_info`` is given; names are left out of the messages
(``include_name_in_message=False``) as voirdire sends none. autogen adds ``"stream": false`` and orders the body's
keys its own way, so its bodies differ from voirdire's in bytes; the harness also compares them key-order-blind.

    python -m bench.speed.drivers.autogen_client --base-url http://127.0.0.1:PORT/v1 --claims claims.jsonl
"""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from typing import Any

from bench.speed.drivers.common import main
from bench.speed.examination import MAX_TOKENS, Call, Message

MODEL = "fake"


def make_call(args: argparse.Namespace) -> tuple[Call, Callable[[], Awaitable[None]]]:
    from autogen_core.models import AssistantMessage, LLMMessage, ModelInfo, SystemMessage, UserMessage
    from autogen_ext.models.openai import OpenAIChatCompletionClient

    info = ModelInfo(vision=False, function_calling=False, json_output=False, family="unknown", structured_output=False)
    client = OpenAIChatCompletionClient(
        model=MODEL,
        base_url=args.base_url,
        api_key="not-needed",
        model_info=info,
        include_name_in_message=False,
        max_retries=0,
        timeout=30.0,
    )

    def convert(m: Message) -> LLMMessage:
        if m["role"] == "system":
            return SystemMessage(content=m["content"])
        if m["role"] == "assistant":
            return AssistantMessage(content=m["content"], source="assistant")
        return UserMessage(content=m["content"], source="user")

    async def call(messages: list[Message], temperature: float, seed: int | None) -> str:
        extra: dict[str, Any] = {"max_tokens": MAX_TOKENS, "temperature": temperature}
        if seed is not None:
            extra["seed"] = seed
        result = await client.create([convert(m) for m in messages], extra_create_args=extra)
        return result.content if isinstance(result.content, str) else ""

    return call, client.close


if __name__ == "__main__":
    main("bare driver on autogen_ext's OpenAIChatCompletionClient", make_call)
