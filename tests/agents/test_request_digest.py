"""The request digest (recorded with every model call, the response cache's key) is written piece by piece, each
message encoded once per conversation: the same digest as the whole conversation's canonical JSON gives."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from autogen_agentchat.messages import TextMessage
from autogen_core import CancellationToken
from autogen_core.models import AssistantMessage, LLMMessage, SystemMessage, UserMessage

from voirdire.agents import CallInfo, ModelAgent, call_metadata
from voirdire.agents.model_agent import _digest, message_json, sharing_key
from voirdire.models import RoleSettings, ScriptedChatCompletionClient


def whole(model: str, messages: list[LLMMessage], args: dict[str, Any]) -> str:
    """The digest as it was always computed: the whole request's JSON, keys sorted."""
    payload = json.dumps(
        {"model": model, "messages": [[type(m).__name__, m.content] for m in messages], "args": args},
        sort_keys=True,
        default=str,
    )
    return "sha256:" + hashlib.sha256(payload.encode()).hexdigest()


class Odd:
    def __str__(self) -> str:
        return "odd value"


CONVERSATIONS: list[list[LLMMessage]] = [
    [],
    [UserMessage(content="hello", source="moderator")],
    [
        SystemMessage(content='You are "strict" \\ terse.\n\t'),
        UserMessage(content="Claim: Tōkyō is 東京 — é \u2028 \x00 \ud83d", source="moderator"),
        AssistantMessage(content="1. Where?\n2. When?", source="examiner"),
        UserMessage(content=["a list", "of parts"], source="moderator"),
    ],
]
ARGS: list[dict[str, Any]] = [
    {},
    {"temperature": 0.7, "seed": 3, "max_tokens": 256},
    {"temperature": -0.0, "top_p": 1.0, "stop": ["\n", "é"], "n": True, "x": None},
    {"response_format": {"name": "r", "schema": {"type": "object", "b": 1, "a": [2, {"z": 1, "y": 0}]}}, "o": Odd()},
]


@pytest.mark.parametrize("messages", CONVERSATIONS)
@pytest.mark.parametrize("args", ARGS)
@pytest.mark.parametrize("model", ["gpt-4o-mini", "modèle/ü", ""])
def test_the_digest_is_the_whole_requests(messages: list[LLMMessage], args: dict[str, Any], model: str) -> None:
    assert _digest(model, messages, args) == whole(model, messages, args)
    for m in messages:
        assert message_json(m) == json.dumps([type(m).__name__, m.content])


async def ask(agent: ModelAgent, text: str, **meta: Any) -> CallInfo:
    msg = TextMessage(content=text, source="moderator", metadata=call_metadata(**meta))
    response = await agent.on_messages([msg], CancellationToken())
    (call,) = response.inner_messages or []
    assert isinstance(call, CallInfo)
    return call


async def test_every_call_of_a_conversation_records_the_whole_conversations_digest() -> None:
    settings = RoleSettings(model="x", temperature=0.0, seed=5)
    agent = ModelAgent("examiner", ScriptedChatCompletionClient(["a1", "a2 é", "a3", "b1", "b2"]), settings)
    before: list[LLMMessage] = []
    for turn, extra in enumerate([{"system": True}, {}, {"temperature": 0.7, "seed": 9}]):
        sent = [*agent.history]
        call = await ask(agent, f"question {turn} — ü", **extra)
        asked = agent.history[len(sent)]
        args = settings.create_args(temperature=extra.get("temperature"), seed=extra.get("seed"))
        assert call.request_digest == whole("x", [*sent, asked], args)
        before = agent.history
    twin = agent.fork(keep_history=True)
    call = await ask(twin, "in the branch")
    assert call.request_digest == whole("x", twin.history[:-1], settings.create_args())
    await agent.on_reset(CancellationToken())
    call = await ask(agent, "afresh")
    assert call.request_digest == whole("x", agent.history[:-1], settings.create_args())
    assert before is agent.history  # the same list, emptied: nothing of the old conversation is encoded


async def test_a_fresh_request_and_a_reask_record_their_own_conversations_digest() -> None:
    settings = RoleSettings(model="x")
    agent = ModelAgent("oracle", ScriptedChatCompletionClient(["a", "b", "c"]), settings)
    await ask(agent, "kept")
    kept = list(agent.history)
    call = await ask(agent, "one-off", fresh=True)
    alone: list[LLMMessage] = [UserMessage(content="one-off", source="moderator")]
    assert call.request_digest == whole("x", alone, settings.create_args())
    assert agent.history == kept
    call = await ask(agent, "kept", max_tokens=64, reask=True)  # the cut-off exchange replaced
    assert call.request_digest == whole("x", agent.history[:-1], {**settings.create_args(), "max_tokens": 64})


def test_a_greedy_requests_sharing_key_drops_its_seed_from_the_whole_digest() -> None:
    messages: list[LLMMessage] = [UserMessage(content="q é", source="m")]
    args = {"temperature": 0.0, "seed": 4}
    key = sharing_key("x", messages, args, 1, _digest("x", messages, args), message_json)
    assert key == whole("x", messages, {"temperature": 0.0}) + "#1"


def test_arguments_that_are_equal_but_written_differently_keep_their_own_json() -> None:
    """The arguments' JSON is kept by their ``repr``: 1, 1.0 and True are equal, 0.0 and -0.0 too, but each is
    written as itself, in any order of calls."""
    messages: list[LLMMessage] = [UserMessage(content="q", source="m")]
    values: list[object] = [1, 1.0, True, 0.0, -0.0, 0, False, None, "1", float("nan"), float("inf")]
    for value in [*values, *reversed(values)]:
        args = {"temperature": value, "seed": 3}
        assert _digest("x", messages, args) == whole("x", messages, args)
