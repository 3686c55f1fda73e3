"""One session as one trace, named and attributed after OpenTelemetry's GenAI semantic conventions, with the
OpenInference attributes Phoenix reads beside them.

A session is an ``invoke_agent {protocol}`` span; each state of its machine a ``step {state}`` span under it; each
model call a ``chat {model}`` client span under its step, with ``gen_ai.provider.name``, ``gen_ai.request.model``,
``gen_ai.response.model``, the usage and the finish reasons. A session that failed ends with an error status and
its ``error.type``. The request's and the reply's messages (``gen_ai.input.messages`` and
``gen_ai.output.messages``, OpenInference's ``input.value``/``output.value`` and ``llm.*_messages``) leave only
when asked (``content=True``), as the conventions require: prompts may be sensitive. Every text goes through
``mask_secrets``.

The verdict is a ``gen_ai.evaluation.result`` log record parented to the session's span (the OTel logs API:
span events are deprecated), or, when asked (``span_events=True``), an event of that span, for receivers that
take no logs. The sink decides where it goes; this module only builds.

Ids are derived, not drawn: the trace id from the run id and session id, each span id from those and the event's
sequence number. A session exported twice (a live run, then its transcript) gets the same ids both times, so a
receiver that keys spans by id stores it once.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol
from urllib.parse import urlsplit

from voirdire.base import mask_secrets, redact_url
from voirdire.certificate import SCORE_STATISTICS, score_of
from voirdire.transcript import ErrorEvent, Message, ModelCall, RunHeader, SessionRecord, Transition, Verdict

TEXT_MAX = 4000  # characters of one text: explanations and messages are evidence, not payloads
EVALUATION_EVENT = "gen_ai.evaluation.result"
# gen_ai.provider.name: the conventions' well-known values where there is one, else a name of voirdire's own
PROVIDER_NAMES = {"openai": "openai", "anthropic": "anthropic", "azure": "azure.ai.openai", "ollama": "ollama",
                  "openai-compatible": "openai_compatible", "local": "llama_cpp", "scripted": "voirdire.scripted",
                  "human": "voirdire.human"}  # fmt: skip
# OpenInference's llm.provider (the hosting) and llm.system (the API's family), where they name one
INFERENCE_PROVIDERS = {"openai": "openai", "anthropic": "anthropic", "azure": "azure"}
INFERENCE_SYSTEMS = {"openai": "openai", "azure": "openai", "openai-compatible": "openai", "anthropic": "anthropic"}
_URL_AT = re.compile(r"@(https?://\S+)$")


@dataclass(frozen=True)
class SpanOptions:
    """What a session's trace holds beyond the names and numbers."""

    content: bool = False
    """The messages, the item and the verdict's text as inputs and outputs (prompts may be sensitive)."""
    span_events: bool = False
    """The verdict as an event of the session's span instead of a log record (receivers that take no logs)."""


class Sink(Protocol):
    """Where the built spans and records go (``otel.Tracer``): the SDK's tracer, the ids the next span takes, the
    logger for the verdict's record (None: not sent as a log), and the verdicts to annotate once sent."""

    tracer: Any
    ids: Any
    logger: Any

    def annotate(self, span_id: int, annotation: Annotation) -> None: ...


@dataclass(frozen=True)
class Annotation:
    """A verdict as an evaluation of its session's span: Phoenix's span annotation (name, label, score,
    explanation), or any receiver's evaluation record."""

    name: str
    label: str
    score: float | None
    explanation: str
    kind: str
    """Who judged: ``LLM`` when the session asked a model, ``CODE`` when rules alone decided."""
    metadata: dict[str, Any] = field(default_factory=dict)


def _digest(*parts: str) -> bytes:
    return hashlib.sha256("\x00".join(("voirdire", *parts)).encode()).digest()


def trace_id_of(run_id: str, session_id: str) -> int:
    """The trace id of one attempt of a session (a run id and a session id): 128 bits, never 0."""
    return int.from_bytes(_digest(run_id, session_id)[:16], "big") or 1


def span_id_of(run_id: str, session_id: str, part: str) -> int:
    """The id of one span of a session's trace (``session``, or an event's sequence number): 64 bits, never 0."""
    return int.from_bytes(_digest(run_id, session_id, part)[:8], "big") or 1


def id_generator() -> Any:
    """An SDK id generator that hands out the ids set on it before each span is started (derived ids), and
    random ones when none is set."""
    from opentelemetry.sdk.trace.id_generator import IdGenerator, RandomIdGenerator

    class Derived(IdGenerator):
        def __init__(self) -> None:
            self.trace_id = 0
            self.span_id = 0
            self.random = RandomIdGenerator()

        def generate_trace_id(self) -> int:
            return self.trace_id or self.random.generate_trace_id()

        def generate_span_id(self) -> int:
            return self.span_id or self.random.generate_span_id()

    return Derived()


def _ns(t: datetime) -> int:
    return int(t.timestamp() * 1_000_000_000)


def text_of(value: str) -> str:
    """A text as it may leave: secrets masked, cut at ``TEXT_MAX`` characters."""
    value = mask_secrets(value)
    return value if len(value) <= TEXT_MAX else value[:TEXT_MAX] + f"… ({len(value) - TEXT_MAX} more characters)"


@dataclass(frozen=True)
class Model:
    """A transcript's model label read back: the provider's kind, the model's own name, the server's URL."""

    kind: str
    name: str
    url: str | None


def model_of(label: str) -> Model:
    """``openai-compatible:org/model@http://host:8000/v1`` → ``openai-compatible``, ``org/model``, its URL;
    ``local`` and ``human`` name themselves; a file (``scripted:``, ``local:``) is named by its file name."""
    kind, sep, rest = label.partition(":")
    if not sep:
        return Model(kind, kind, None)
    found = _URL_AT.search(rest)
    url = found.group(1) if found else None
    name = rest[: found.start()] if found else rest
    if kind in ("scripted", "local"):
        name = name.replace("\\", "/").rsplit("/", 1)[-1] or name
    return Model(kind, name or kind, url)


def export_session(sink: Sink, header: RunHeader | None, session: SessionRecord, options: SpanOptions) -> None:
    """One session as one trace: its span, a span per step, a span per model call, the verdict as a log record
    (or an event) of the session's span; a session that failed ends in an error status."""
    from opentelemetry import trace

    events = sorted(session.events, key=lambda e: e.seq)
    if not events:
        return
    run_id, session_id = session.run_id, session.session_id
    start, end = events[0].time, events[-1].time
    protocol = header.protocol if header else "unknown"
    sink.ids.trace_id, sink.ids.span_id = trace_id_of(run_id, session_id), span_id_of(run_id, session_id, "session")
    root = sink.tracer.start_span(
        f"invoke_agent {protocol}", start_time=_ns(start),
        attributes=_session_attributes(protocol, session, options, header.display.item_fields if header else ()),
    )  # fmt: skip
    sink.ids.trace_id = 0  # every later span of this session is a child: it takes the root's trace id
    context = trace.set_span_in_context(root)
    steps = _steps(sink, session, events, context, end)
    turns = _turns(events) if options.content else {}
    for e in events:
        if isinstance(e, ModelCall):
            _call_span(sink, header, session, e, steps, context, turns.get(e.seq))
        elif isinstance(e, Verdict):
            _verdict(sink, protocol, session, e, root, context, options)
        elif isinstance(e, ErrorEvent):
            root.set_status(trace.Status(trace.StatusCode.ERROR, text_of(f"{e.error_type}: {e.message}")))
            root.set_attribute("error.type", e.error_type)
    sink.ids.span_id = 0
    root.end(end_time=_ns(end))


def item_text(item: Mapping[str, Any], shown: Sequence[str] = ()) -> str:
    """The item as the session's input reads: its shown fields (the protocol's display hints; else every field
    but its id), one ``field: value`` line each, masked."""
    names = [n for n in shown if n in item] or [n for n in item if n != "id"]
    lines = []
    for name in names:
        value = item[name]
        if value is None or value == "" or value == []:
            continue
        said = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        lines.append(f"{name}: {said}")
    return text_of("\n".join(lines))


def _session_attributes(
    protocol: str, session: SessionRecord, options: SpanOptions, shown: Sequence[str] = ()
) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": protocol,
        "gen_ai.conversation.id": session.session_id,
        "openinference.span.kind": "AGENT",
        "voirdire.protocol": protocol,
        "voirdire.session.id": session.session_id,
        "voirdire.item.id": session.item_id or "",
        "voirdire.run.id": session.run_id,
    }
    if options.content and session.item:
        attributes |= {"input.value": item_text(session.item, shown), "input.mime_type": "text/plain"}
    verdict = next((e for e in reversed(session.events) if isinstance(e, Verdict)), None)
    if options.content and verdict is not None:
        said = " ".join(verdict.evidence)
        attributes |= {"output.value": text_of(f"{verdict.decision}: {said}" if said else verdict.decision),
                       "output.mime_type": "text/plain"}  # fmt: skip
    return attributes


def _steps(
    sink: Sink, session: SessionRecord, events: Sequence[Any], context: Any, end: datetime
) -> list[tuple[datetime, Any]]:
    """A span per state the session passed through, from its transition to the next (or the session's end)."""
    moves = [e for e in events if isinstance(e, Transition)]
    spans = []
    for i, move in enumerate(moves):
        until = moves[i + 1].time if i + 1 < len(moves) else end
        sink.ids.span_id = span_id_of(session.run_id, session.session_id, str(move.seq))
        span = sink.tracer.start_span(
            f"step {move.to_state}", context=context, start_time=_ns(move.time),
            attributes={"openinference.span.kind": "CHAIN", "voirdire.step": move.to_state,
                        "voirdire.step.from": move.from_state or "",
                        "voirdire.step.reason": text_of(move.reason or "")},
        )  # fmt: skip
        span.end(end_time=_ns(until))
        spans.append((move.time, span))
    return spans


Turn = tuple[list[dict[str, str]], list[str]]
"""A model call's messages as the transcript records them: what was sent (role, content), the replies drawn."""


def _turns(events: Sequence[Any]) -> dict[int, Turn]:
    """Each model call's turn, by the call's sequence number: the messages written to its role (in its branch)
    since that role's previous call, and the replies its role wrote after it. A call asked again with the same
    messages (a reply cut off at max_tokens) is given the messages of the call before it."""
    pending: dict[tuple[str | None, str], list[dict[str, str]]] = {}
    last_sent: dict[tuple[str | None, str], list[dict[str, str]]] = {}
    awaiting: dict[tuple[str | None, str], int] = {}
    turns: dict[int, Turn] = {}
    for e in events:
        if isinstance(e, Message):
            if e.receiver == "moderator":
                if (e.branch, e.sender) in awaiting:  # a reply, as the session records what a role answered
                    turns[awaiting[(e.branch, e.sender)]][1].append(e.content)
            else:
                who = "assistant" if e.sender == e.receiver else "system" if e.sender == "system" else "user"
                pending.setdefault((e.branch, e.receiver), []).append({"role": who, "content": e.content})
                awaiting.pop((e.branch, e.receiver), None)
        elif isinstance(e, ModelCall):
            key = (e.branch, e.role)
            sent = pending.pop(key, None) or last_sent.get(key, [])
            last_sent[key] = sent
            turns[e.seq] = (sent, [])
            awaiting[key] = e.seq
    return turns


def _messages(turn: Turn | None, call: ModelCall) -> dict[str, Any]:
    """The call's messages in the GenAI conventions' JSON and in OpenInference's flattened attributes."""
    sent, replies = turn or ([], [])
    replies = replies or [call.response]
    finish = call.finish_reason or "stop"
    inputs = [{"role": m["role"], "parts": [{"type": "text", "content": text_of(m["content"])}]} for m in sent]
    outputs = [{"role": "assistant", "parts": [{"type": "text", "content": text_of(r)}], "finish_reason": finish}
               for r in replies]  # fmt: skip
    attributes: dict[str, Any] = {
        "gen_ai.input.messages": json.dumps(inputs, ensure_ascii=False),
        "gen_ai.output.messages": json.dumps(outputs, ensure_ascii=False),
        "input.value": "\n\n".join(m["parts"][0]["content"] for m in inputs),
        "input.mime_type": "text/plain",
        "output.value": "\n\n".join(m["parts"][0]["content"] for m in outputs),
        "output.mime_type": "text/plain",
    }
    for where, messages in (("llm.input_messages", inputs), ("llm.output_messages", outputs)):
        for i, m in enumerate(messages):
            attributes[f"{where}.{i}.message.role"] = m["role"]
            attributes[f"{where}.{i}.message.content"] = m["parts"][0]["content"]
    return attributes


def _call_span(
    sink: Sink,
    header: RunHeader | None,
    session: SessionRecord,
    call: ModelCall,
    steps: Sequence[tuple[datetime, Any]],
    root: Any,
    turn: Turn | None,
) -> None:
    from opentelemetry import trace

    parent = next((span for began, span in reversed(steps) if began <= call.time), None)
    context = trace.set_span_in_context(parent) if parent is not None else root
    finished = _ns(call.time)
    sink.ids.span_id = span_id_of(session.run_id, session.session_id, str(call.seq))
    span = sink.tracer.start_span(
        f"chat {mask_secrets(model_of(call.model).name)}",
        context=context,
        kind=trace.SpanKind.CLIENT,
        start_time=finished - int(call.latency_s * 1_000_000_000),
        attributes=_call_attributes(header, session, call) | (_messages(turn, call) if turn is not None else {}),
    )
    span.end(end_time=finished)


def _call_attributes(header: RunHeader | None, session: SessionRecord, call: ModelCall) -> dict[str, Any]:
    model = model_of(call.model)
    name = mask_secrets(model.name)
    prompt, completion = call.usage.prompt_tokens, call.usage.completion_tokens
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": PROVIDER_NAMES.get(model.kind, model.kind),
        "gen_ai.request.model": name,
        "gen_ai.response.model": name,  # the transcript records the model asked for
        "gen_ai.agent.name": call.role,
        "gen_ai.conversation.id": session.session_id,
        "gen_ai.usage.input_tokens": prompt,
        "gen_ai.usage.output_tokens": completion,
        "gen_ai.response.finish_reasons": [call.finish_reason or "unknown"],
        "openinference.span.kind": "LLM",
        "llm.model_name": name,
        "llm.token_count.prompt": prompt,
        "llm.token_count.completion": completion,
        "llm.token_count.total": prompt + completion,
        "voirdire.model.spec": mask_secrets(call.model),
        "voirdire.call.retries": call.retries,
        "voirdire.call.cached": call.cached or call.coalesced,
    }
    if model.kind in INFERENCE_PROVIDERS:
        attributes["llm.provider"] = INFERENCE_PROVIDERS[model.kind]
    if model.kind in INFERENCE_SYSTEMS:
        attributes["llm.system"] = INFERENCE_SYSTEMS[model.kind]
    if model.url:
        parts = urlsplit(redact_url(model.url))
        if parts.hostname:
            attributes["server.address"] = parts.hostname
            attributes["server.port"] = parts.port or (443 if parts.scheme == "https" else 80)
    binding = header.roles.get(call.role) if header else None
    if binding is not None:
        for key, value in (("max_tokens", binding.max_tokens), ("temperature", binding.temperature),
                           ("seed", binding.seed)):  # fmt: skip
            if value is not None:
                attributes[f"gen_ai.request.{key}"] = value
    return attributes


def evaluation(protocol: str, verdict: Verdict) -> dict[str, Any]:
    """The ``gen_ai.evaluation.result`` attributes of a verdict: its protocol, decision, score and evidence."""
    attributes: dict[str, Any] = {
        "gen_ai.evaluation.name": protocol,
        "gen_ai.evaluation.score.label": verdict.decision,
        "gen_ai.evaluation.explanation": text_of(" ".join(verdict.evidence)),
    }
    score = score_value(verdict)
    if score is not None:
        attributes["gen_ai.evaluation.score.value"] = score
    if verdict.accepted is not None:
        attributes["voirdire.accepted"] = verdict.accepted
    return attributes


def score_value(verdict: Verdict) -> float | None:
    """The verdict's own score where it carries one, read as the certificate reads it (DCR's score, QA's F1)."""
    found = next((s for key in SCORE_STATISTICS if (s := score_of(verdict.statistics, key)) is not None), None)
    return float(found) if found is not None else None


def _verdict(
    sink: Sink,
    protocol: str,
    session: SessionRecord,
    verdict: Verdict,
    root: Any,
    context: Any,
    options: SpanOptions,
) -> None:
    attributes = evaluation(protocol, verdict) | {"voirdire.session.id": session.session_id}
    if options.span_events:
        root.add_event(EVALUATION_EVENT, attributes, timestamp=_ns(verdict.time))
    elif sink.logger is not None:
        from opentelemetry._logs import SeverityNumber

        sink.logger.emit(
            timestamp=_ns(verdict.time), context=context, severity_number=SeverityNumber.INFO,
            event_name=EVALUATION_EVENT, attributes=attributes,
        )  # fmt: skip
    asked = any(isinstance(e, ModelCall) for e in session.events)
    metadata: Mapping[str, Any] = {"run_id": session.run_id, "session_id": session.session_id,
                                   "item_id": session.item_id or "", "accepted": verdict.accepted}  # fmt: skip
    sink.annotate(
        root.get_span_context().span_id,
        Annotation(
            name=protocol, label=verdict.decision, score=score_value(verdict),
            explanation=attributes["gen_ai.evaluation.explanation"], kind="LLM" if asked else "CODE",
            metadata=dict(metadata),
        ),
    )  # fmt: skip
