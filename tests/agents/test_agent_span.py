"""autogen's "create_agent" span for each ModelAgent built: opened where an OpenTelemetry tracer provider is set (as
autogen's BaseChatAgent opens it), left out where none is (no span would be recorded), with the same agent either
way."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry import trace

from voirdire.agents import ModelAgent
from voirdire.models import RoleSettings
from voirdire.models.scripted import ScriptedChatCompletionClient


def _agent(name: str = "examiner") -> ModelAgent:
    client = ScriptedChatCompletionClient(["Yes."])
    return ModelAgent(name, client, RoleSettings(model="scripted:yes"), model_label="scripted:yes", timeout=5.0)


def _state(agent: ModelAgent) -> dict[str, Any]:
    return {k: v for k, v in vars(agent).items() if k != "client"}


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the agents autogen's create_agent span was opened for (the span itself left to autogen)."""
    import autogen_agentchat.agents._base_chat_agent as base

    names: list[str] = []
    original = base.trace_create_agent_span

    def counting(agent_name: str, **kwargs: Any) -> Any:
        names.append(agent_name)
        return original(agent_name, **kwargs)

    monkeypatch.setattr(base, "trace_create_agent_span", counting)
    return names


@pytest.fixture
def no_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", None)
    monkeypatch.delenv("OTEL_PYTHON_TRACER_PROVIDER", raising=False)


@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> Any:
    sdk = pytest.importorskip("opentelemetry.sdk.trace", reason="the otel extra is not installed")
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = sdk.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", provider)  # this test's alone, put back after it
    yield exporter
    provider.shutdown()


def test_without_a_provider_no_span_and_the_same_agent(
    spans: Any, opened: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    traced = _agent()
    assert [s.name for s in spans.get_finished_spans()] == ["create_agent examiner"]
    assert opened == ["examiner"]
    monkeypatch.setattr(trace, "_TRACER_PROVIDER", None)
    monkeypatch.delenv("OTEL_PYTHON_TRACER_PROVIDER", raising=False)
    plain = _agent()
    plain.fork()
    assert opened == ["examiner"]  # not opened again: it would not be recorded
    assert len(spans.get_finished_spans()) == 1
    assert _state(plain) == _state(traced)
    assert plain.name == traced.name == "examiner"
    assert plain.description == traced.description == "examiner played by scripted:yes"


def test_with_a_provider_each_agent_opens_autogen_s_span(spans: Any, opened: list[str]) -> None:
    agent = _agent("examinee")
    twin = agent.fork()
    assert opened == ["examinee", "examinee"]
    names = [s.name for s in spans.get_finished_spans()]
    assert names == ["create_agent examinee", "create_agent examinee"]
    attributes = spans.get_finished_spans()[0].attributes
    assert attributes["gen_ai.agent.name"] == "examinee"
    assert attributes["gen_ai.agent.description"] == "examinee played by scripted:yes"
    assert twin.description == agent.description


@pytest.mark.parametrize("traced", [False, True])
def test_a_name_that_is_not_an_identifier_is_refused_either_way(
    traced: bool, no_provider: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if traced:
        pytest.importorskip("opentelemetry.sdk.trace", reason="the otel extra is not installed")
        from opentelemetry.sdk.trace import TracerProvider

        monkeypatch.setattr(trace, "_TRACER_PROVIDER", TracerProvider())
    with pytest.raises(ValueError, match="valid Python identifier"):
        _agent("not an identifier")
