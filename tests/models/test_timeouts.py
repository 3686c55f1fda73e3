"""Every kind of client gives up on a request past the role's deadline, as a transient ``ReplyTimeout``; clients
that have no deadline (a person typing) are never hurried."""

from __future__ import annotations

import asyncio
import threading
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
    """Stands in for llama_cpp.Llama: a generation that does not end until ``release`` is set."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.finished = 0

    def tokenize(self, text: bytes, add_bos: bool = False) -> list[int]:
        return list(range(len(text.split())))

    def create_chat_completion(self, **kwargs: Any) -> dict[str, Any]:
        self.release.wait(60)  # bounded: a broken test must not hang the suite
        self.finished += 1
        return {"choices": [{"message": {"content": "late"}, "finish_reason": "stop"}], "usage": {}}


def slow_local(llm: SlowLlama) -> LlamaCppClient:
    client = LlamaCppClient.__new__(LlamaCppClient)
    client._usage = RequestUsage(prompt_tokens=0, completion_tokens=0)
    client.path, client.n_ctx, client._llm, client._lock = Path("slow.gguf"), 512, llm, threading.Lock()
    return client


async def test_a_local_generation_past_its_timeout_is_a_reply_timeout() -> None:
    llm = SlowLlama()
    client = slow_local(llm)
    with pytest.raises(ReplyTimeout, match=r"no generation within 0\.2 s"):
        await client.complete([UserMessage(content="q", source="user")], {"timeout": 0.2})
    assert llm.finished == 0  # given up on while the generation was still running, not after it
    llm.release.set()  # the generation runs to its end in its thread; the next one waits for the lock
    done = await client.complete([UserMessage(content="q", source="user")], {"timeout": 30})
    assert done.texts == ["late"] and llm.finished == 2


class SlowReplay(ReplayChatCompletionClient):
    """An autogen client that is not one of voirdire's (so the agent itself holds it to the deadline); its first
    reply never comes (it counts how often it was cut off), the next comes at once."""

    slow = 1
    cut_off = 0

    async def create(self, messages: Any, **kwargs: Any) -> CreateResult:  # type: ignore[override]
        if self.slow:
            self.slow -= 1
            try:
                await asyncio.sleep(60)  # never, as far as the test goes: only the deadline ends it
            except asyncio.CancelledError:
                self.cut_off += 1
                raise
        return await super().create(messages, **kwargs)


async def test_the_agent_holds_any_client_to_the_role_timeout() -> None:
    client = SlowReplay(["on time"])
    agent = ModelAgent("a", client, RoleSettings(model="x", timeout=0.2), backoff_s=0.01)
    response = await asyncio.wait_for(
        agent.on_messages([TextMessage(content="q", source="m")], CancellationToken()), 30
    )
    assert response.chat_message.to_model_text() == "on time" and client.cut_off == 1
    (call,) = response.inner_messages or []
    assert getattr(call, "retries", None) == 1
    agent = ModelAgent("a", SlowReplay(["x"]), RoleSettings(model="x", timeout=0.2, max_retries=0))
    with pytest.raises(ModelCallError, match=r"ReplyTimeout: no reply within 0\.2 s \(timeout\) \(not retried"):
        await agent.on_messages([TextMessage(content="q", source="m")], CancellationToken())


async def test_a_person_typing_has_no_deadline() -> None:
    assert RoleSettings(model="human").timeout_s() is None
