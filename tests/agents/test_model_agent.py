"""ModelAgent: per-call data travels in the autogen Response, and the metadata keys it understands shape the call."""

from __future__ import annotations

from autogen_agentchat.messages import TextMessage
from autogen_core import CancellationToken

from voirdire.agents import CallInfo, FunctionAgent, ModelAgent, call_metadata
from voirdire.models import RoleSettings, ScriptedChatCompletionClient


async def ask(agent: ModelAgent | FunctionAgent, text: str, **meta: object) -> tuple[str, list[object]]:
    msg = TextMessage(content=text, source="moderator", metadata=call_metadata(**meta))  # type: ignore[arg-type]
    response = await agent.on_messages([msg], CancellationToken())
    return response.chat_message.to_model_text(), list(response.inner_messages or [])


async def test_the_call_is_reported_in_the_response() -> None:
    agent = ModelAgent("examiner", ScriptedChatCompletionClient(["first", "second"]), RoleSettings(model="x"))
    text, inner = await ask(agent, "hello")
    assert text == "first"
    (call,) = inner
    assert isinstance(call, CallInfo) and call.source == "examiner" and call.response == "first"
    assert call.retries == 0 and not call.cached and call.request_digest.startswith("sha256:")


async def test_per_call_temperature_and_seed_change_the_request() -> None:
    settings = RoleSettings(model="x")
    plain = ModelAgent("a", ScriptedChatCompletionClient(["r"]), settings)
    sampled = ModelAgent("a", ScriptedChatCompletionClient(["r"]), settings)
    _, (c1,) = await ask(plain, "q")
    _, (c2,) = await ask(sampled, "q", temperature=0.7, seed=3)
    assert isinstance(c1, CallInfo) and isinstance(c2, CallInfo) and c1.request_digest != c2.request_digest


async def test_a_system_message_goes_into_the_history_as_system() -> None:
    agent = ModelAgent("a", ScriptedChatCompletionClient(["r"]), RoleSettings(model="x"))
    await ask(agent, "be terse", system=True)
    assert type(agent.history[0]).__name__ == "SystemMessage"


async def test_a_rule_agent_reports_no_model_call() -> None:
    text, inner = await ask(FunctionAgent("verifier", lambda t: t.upper()), "ok")
    assert text == "OK" and inner == []
