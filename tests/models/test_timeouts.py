"""Every kind of client gives up on a request past the role's deadline, as a transient ``ReplyTimeout``; clients
that have no deadline (a person typing) are never hurried."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from autogen_agentchat.messages import TextMessage
from autogen_core import CancellationToken
from autogen_core.models import CreateResult, RequestUsage, UserMessage
from autogen_ext.models.replay import ReplayChatCompletionClient

from voirdire.agents import ModelAgent, ModelCallError
from voirdire.models import LlamaCppClient, ReplyTimeout, RoleSettings


class SlowLlama:
    """Stands in for llama_cpp.Llama: a generation that takes ``seconds``."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def tokenize(self, text: bytes, add_bos: bool = False) -> list[int]:
        return list(range(len(text.split())))

    def create_chat_completion(self, **kwargs: Any) -> dict[str, Any]:
        time.sleep(self.seconds)
        return {"choices": [{"message": {"content": "late"}, "finish_reason": "stop"}], "usage": {}}


def slow_local(seconds: float) -> LlamaCppClient:
    client = LlamaCppClient.__new__(LlamaCppClient)
    client._usage = RequestUsage(prompt_tokens=0, completion_tokens=0)
    client.path, client.n_ctx, client._llm, client._lock = Path("slow.gguf"), 512, SlowLlama(seconds), threading.Lock()
    return client


async def test_a_local_generation_past_its_timeout_is_a_reply_timeout() -> None:
    client = slow_local(0.6)
    start = time.monotonic()
    with pytest.raises(ReplyTimeout, match=r"no generation within 0\.2 s"):
        await client.complete([UserMessage(content="q", source="user")], {"timeout": 0.2})
    assert time.monotonic() - start < 0.5
    await asyncio.sleep(0.5)  # the generation runs to its end in its thread
    done = await client.complete([UserMessage(content="q", source="user")], {"timeout": 5})
    assert done.texts == ["late"]


class SlowReplay(ReplayChatCompletionClient):
    """An autogen client that is not one of voirdire's (so the agent itself holds it to the deadline); its first
    reply comes too late, the next at once."""

    slow = 1

    async def create(self, messages: Any, **kwargs: Any) -> CreateResult:  # type: ignore[override]
        if self.slow:
            self.slow -= 1
            await asyncio.sleep(5)
        return await super().create(messages, **kwargs)


async def test_the_agent_holds_any_client_to_the_role_timeout() -> None:
    agent = ModelAgent("a", SlowReplay(["on time"]), RoleSettings(model="x", timeout=0.2), backoff_s=0.01)
    start = time.monotonic()
    response = await agent.on_messages([TextMessage(content="q", source="m")], CancellationToken())
    assert response.chat_message.to_model_text() == "on time" and time.monotonic() - start < 1.5
    (call,) = response.inner_messages or []
    assert getattr(call, "retries", None) == 1
    agent = ModelAgent("a", SlowReplay(["x"]), RoleSettings(model="x", timeout=0.2, max_retries=0))
    with pytest.raises(ModelCallError, match=r"ReplyTimeout: no reply within 0\.2 s \(timeout\) \(not retried"):
        await agent.on_messages([TextMessage(content="q", source="m")], CancellationToken())


async def test_a_person_typing_has_no_deadline() -> None:
    assert RoleSettings(model="human").timeout_s() is None
