"""A person plays a role at the terminal: the prompt goes to stderr, the reply is read from stdin."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from autogen_core.models import CreateResult, LLMMessage, RequestUsage

from voirdire.models.base import TextOnlyClient, text_of


class HumanClient(TextOnlyClient):
    """A person plays the role: the last prompt is printed and the reply read from the terminal."""

    family = "human"

    async def _complete(self, messages: Sequence[LLMMessage], args: Mapping[str, Any]) -> CreateResult:
        prompt = text_of(messages[-1]) if messages else ""

        def ask() -> str:
            print(f"\n--- your turn ---\n{prompt}\n(finish with an empty line)", file=sys.stderr)
            lines = []
            for line in sys.stdin:
                if not line.strip():
                    break
                lines.append(line.rstrip("\n"))
            return "\n".join(lines)

        text = await asyncio.to_thread(ask)
        return CreateResult(
            finish_reason="stop",
            content=text,
            usage=RequestUsage(prompt_tokens=0, completion_tokens=0),
            cached=False,
        )
