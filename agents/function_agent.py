"""A deterministic role (rule verifier, decision tree, aligner) as an autogen ``BaseChatAgent``."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence

from autogen_agentchat.agents import BaseChatAgent
from autogen_agentchat.base import Response
from autogen_agentchat.messages import BaseChatMessage, TextMessage
from autogen_core import CancellationToken

Handler = Callable[[str], str | Awaitable[str]]


class FunctionAgent(BaseChatAgent):
    """Answers each message with ``fn(text)``; no model, so the transcript records no model call for it."""

    def __init__(self, name: str, fn: Handler, description: str = "a deterministic role") -> None:
        super().__init__(name=name, description=description)
        self.fn = fn
        self.model_label = f"rule:{getattr(fn, '__qualname__', type(fn).__name__)}"

    @property
    def produced_message_types(self) -> Sequence[type[BaseChatMessage]]:
        return (TextMessage,)

    async def on_messages(self, messages: Sequence[BaseChatMessage], cancellation_token: CancellationToken) -> Response:
        text = "\n".join(m.to_model_text() for m in messages)
        out = self.fn(text)
        if inspect.isawaitable(out):
            out = await out
        return Response(chat_message=TextMessage(content=str(out), source=self.name))

    async def on_reset(self, cancellation_token: CancellationToken) -> None:
        return None
