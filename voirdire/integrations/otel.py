"""Sessions as OpenTelemetry traces, for Phoenix, Langfuse, Opik, Jaeger or any OTLP collector.

One trace per session: a root span for the session, a span per protocol step (the state machine's states, from one
transition to the next) and a span per model call, named and attributed after OpenTelemetry's GenAI semantic
conventions (``gen_ai.operation.name``, ``gen_ai.request.model``, ``gen_ai.usage.input_tokens`` /
``output_tokens``, ``gen_ai.agent.name`` = the role); the verdict is a ``gen_ai.evaluation.result`` event of the
session's span. Messages go in as span events only when asked (``content=True``), since prompts may be sensitive;
every text that leaves goes through ``mask_secrets``. Spans are built from the transcript's events (a finished
run's file, or a running one followed as it grows), so the transcript stays the evidence and the run has no hook.

The export is built on the OpenTelemetry SDK and its OTLP/HTTP exporter (the ``otel`` extra). A collector that
is down never slows or fails a run: spans leave in batches from a background thread, a batch that cannot be sent
makes every later one be dropped at once, and one warning line says how many were dropped.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from pydantic import TypeAdapter, ValidationError

from voirdire.base import VoirdireError, mask_secrets
from voirdire.certificate import SCORE_STATISTICS, score_of
from voirdire.transcript import (
    ErrorEvent,
    Line,
    Message,
    ModelCall,
    RunHeader,
    SessionRecord,
    SessionStart,
    Transition,
    Verdict,
    iter_records,
)

ENDPOINT_ENV = "OTEL_EXPORTER_OTLP_ENDPOINT"
EXPORT_TIMEOUT_S = 2.0  # one batch's wait on a collector: a down one costs this once, then spans are dropped
QUEUE_MAX = 4096  # spans waiting to leave; beyond it the SDK drops them (memory stays bounded)
TEXT_MAX = 4000  # characters of one attribute: explanations and messages are evidence, not payloads
_LINE: TypeAdapter[Line] = TypeAdapter(Line)


class OtelError(VoirdireError, RuntimeError):
    """The export cannot start: the extra is not installed, or the endpoint is not a URL."""


def traces_url(endpoint: str) -> str:
    """OTLP/HTTP's traces URL from what a user gives: a collector's base URL gets ``/v1/traces`` (as the SDK does
    with ``OTEL_EXPORTER_OTLP_ENDPOINT``); a URL already ending in it is kept."""
    endpoint = endpoint.strip()
    if not endpoint.startswith(("http://", "https://")):
        raise OtelError(f"--otel: {mask_secrets(endpoint)!r} is not an http(s) URL of an OTLP collector")
    return endpoint if endpoint.rstrip("/").endswith("/v1/traces") else endpoint.rstrip("/") + "/v1/traces"


def _ns(t: datetime) -> int:
    return int(t.timestamp() * 1_000_000_000)


def _text(value: str) -> str:
    value = mask_secrets(value)
    return value if len(value) <= TEXT_MAX else value[:TEXT_MAX] + f"… ({len(value) - TEXT_MAX} more characters)"


def _require_sdk() -> None:
    import importlib.util

    if importlib.util.find_spec("opentelemetry.sdk") is None:
        raise OtelError("OpenTelemetry export needs the otel extra: pip install 'voirdire[otel]'")


def _warn_down(url: str, why: str | None, path: Path, stream: TextIO | None) -> None:
    print(
        f"warning: otel: spans not sent to {mask_secrets(url)} ({why}); the transcript holds every event: "
        f"`voirdire export otel {path} --endpoint URL` sends them later",
        file=stream or sys.stderr,
    )


def _unreachable(url: str) -> str | None:
    """Why nothing can be sent to ``url`` (its port refuses a connection, its name does not resolve), or None."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        socket.create_connection((parts.hostname or "", port), timeout=EXPORT_TIMEOUT_S).close()
    except OSError as exc:
        return f"cannot connect: {exc.strerror or type(exc).__name__}"
    return None


class _Exporter:
    """The OTLP exporter, counting what could not be sent: after the first failure every batch is dropped at
    once (no batch waits on a collector known to be down) and the run ends with one warning line."""

    def __init__(self, url: str) -> None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        self.url = url
        self.inner = OTLPSpanExporter(endpoint=url, timeout=EXPORT_TIMEOUT_S)
        self.sent = 0
        self.dropped = 0
        self.failure: str | None = None
        self.reached = False

    def export(self, spans: Sequence[Any]) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        if self.failure is None and not self.reached:
            self.failure = _unreachable(self.url)  # refused at once: no batch waits out the SDK's retries
            self.reached = self.failure is None
        if self.failure is None:
            try:
                result = self.inner.export(spans)
            except Exception as exc:  # any transport failure is "collector down", never the run's
                result, self.failure = SpanExportResult.FAILURE, type(exc).__name__
            if result == SpanExportResult.SUCCESS:
                self.sent += len(spans)
                return result
            self.failure = self.failure or "the collector refused or did not answer"
        self.dropped += len(spans)
        return SpanExportResult.SUCCESS  # dropped on purpose: the SDK need not log or retry it

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


class Tracer:
    """A tracer provider of its own (the application's global one is left alone) exporting to ``endpoint``."""

    def __init__(self, endpoint: str, resource: Mapping[str, str]) -> None:
        try:
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor
        except ImportError:
            raise OtelError("OpenTelemetry export needs the otel extra: pip install 'voirdire[otel]'") from None
        for name in ("opentelemetry.exporter.otlp.proto.http.trace_exporter", "opentelemetry.sdk.trace.export"):
            logging.getLogger(name).setLevel(logging.CRITICAL)  # one warning line of our own instead of tracebacks
        self.exporter = _Exporter(traces_url(endpoint))
        self.provider = TracerProvider(resource=Resource.create({"service.name": "voirdire", **resource}))
        self.provider.add_span_processor(
            BatchSpanProcessor(self.exporter, max_queue_size=QUEUE_MAX, schedule_delay_millis=500)  # type: ignore[arg-type]
        )
        self.tracer = self.provider.get_tracer("voirdire")
        self.sessions = 0

    def close(self, stream: TextIO | None = None) -> None:
        self.provider.shutdown()  # sends what is queued (a down collector: dropped at once)
        if self.exporter.failure is not None:
            print(
                f"warning: otel: {self.exporter.dropped} spans not sent to {mask_secrets(self.exporter.url)} "
                f"({self.exporter.failure}); the transcript holds every event",
                file=stream or sys.stderr,
            )


def export_session(tracer: Tracer, header: RunHeader | None, session: SessionRecord, *, content: bool) -> None:
    """One session as one trace: its span, a span per step, a span per model call, the verdict as an event."""
    from opentelemetry import trace

    events = sorted(session.events, key=lambda e: e.seq)
    if not events:
        return
    start, end = events[0].time, events[-1].time
    protocol = header.protocol if header else "unknown"
    root = tracer.tracer.start_span(
        f"session {protocol}",
        start_time=_ns(start),
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.conversation.id": session.session_id,
            "voirdire.protocol": protocol,
            "voirdire.session.id": session.session_id,
            "voirdire.item.id": session.item_id or "",
            "voirdire.run.id": session.run_id,
        },
    )
    context = trace.set_span_in_context(root)
    steps = _steps(tracer, events, context, end)
    for e in events:
        if isinstance(e, ModelCall):
            _call_span(tracer, e, steps, context)
        elif isinstance(e, Message) and content:
            root.add_event("gen_ai.message", {"gen_ai.agent.name": e.sender, "voirdire.to": e.receiver,
                                              "content": _text(e.content)}, timestamp=_ns(e.time))  # fmt: skip
        elif isinstance(e, Verdict):
            root.add_event("gen_ai.evaluation.result", _evaluation(protocol, e), timestamp=_ns(e.time))
        elif isinstance(e, ErrorEvent):
            root.set_status(trace.Status(trace.StatusCode.ERROR, _text(f"{e.error_type}: {e.message}")))
    root.end(end_time=_ns(end))
    tracer.sessions += 1


def _steps(tracer: Tracer, events: Sequence[Any], context: Any, end: datetime) -> list[tuple[datetime, Any]]:
    """A span per state the session passed through, from its transition to the next (or the session's end)."""
    moves = [e for e in events if isinstance(e, Transition)]
    spans = []
    for i, move in enumerate(moves):
        until = moves[i + 1].time if i + 1 < len(moves) else end
        span = tracer.tracer.start_span(
            f"step {move.to_state}", context=context, start_time=_ns(move.time),
            attributes={"voirdire.step": move.to_state, "voirdire.step.from": move.from_state or "",
                        "voirdire.step.reason": _text(move.reason or "")},
        )  # fmt: skip
        span.end(end_time=_ns(until))
        spans.append((move.time, span))
    return spans


def _call_span(tracer: Tracer, call: ModelCall, steps: Sequence[tuple[datetime, Any]], root: Any) -> None:
    from opentelemetry import trace

    parent = next((span for began, span in reversed(steps) if began <= call.time), None)
    context = trace.set_span_in_context(parent) if parent is not None else root
    finished = _ns(call.time)
    span = tracer.tracer.start_span(
        f"chat {mask_secrets(call.model)}",
        context=context,
        kind=trace.SpanKind.CLIENT,
        start_time=finished - int(call.latency_s * 1_000_000_000),
        attributes={
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": mask_secrets(call.model),
            "gen_ai.agent.name": call.role,
            "gen_ai.usage.input_tokens": call.usage.prompt_tokens,
            "gen_ai.usage.output_tokens": call.usage.completion_tokens,
            "gen_ai.response.finish_reasons": [call.finish_reason or "unknown"],
            "voirdire.call.retries": call.retries,
            "voirdire.call.cached": call.cached or call.coalesced,
        },
    )
    span.end(end_time=finished)


def _evaluation(protocol: str, v: Verdict) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "gen_ai.evaluation.name": protocol,
        "gen_ai.evaluation.score.label": v.decision,
        "gen_ai.evaluation.explanation": _text(" ".join(v.evidence)),
    }
    # the verdict's own score where it carries one, read as the certificate reads it (DCR's score, QA's F1)
    score = next((s for key in SCORE_STATISTICS if (s := score_of(v.statistics, key)) is not None), None)
    if score is not None:
        attributes["gen_ai.evaluation.score.value"] = score
    if v.accepted is not None:
        attributes["voirdire.accepted"] = v.accepted
    return attributes


def _resource(header: RunHeader | None, path: Path) -> dict[str, str]:
    named = {"voirdire.transcript": path.name}
    if header is not None:
        named |= {"voirdire.protocol": header.protocol, "voirdire.run.id": header.run_id}
    return named


class _Sessions:
    """Events gathered per session until its verdict or error, then exported and forgotten: memory holds only
    the sessions in flight."""

    def __init__(self, tracer: Tracer, content: bool) -> None:
        self.tracer, self.content = tracer, content
        self.header: RunHeader | None = None
        self.open: dict[tuple[str, str], list[Any]] = {}

    def add(self, record: Any) -> None:
        if isinstance(record, RunHeader):
            self.header = record
            return
        key = (record.run_id, record.session_id)
        self.open.setdefault(key, []).append(record)
        if isinstance(record, Verdict | ErrorEvent):
            self.finish(key)

    def finish_all(self) -> None:
        """Sessions that never ended (a run stopped, a file cut short): exported as far as they went."""
        for key in list(self.open):
            self.finish(key)

    def finish(self, key: tuple[str, str]) -> None:
        events = self.open.pop(key)
        start = next((e for e in events if isinstance(e, SessionStart)), None)
        record = SessionRecord(session_id=key[1], run_id=key[0], item_id=start.item_id if start else None,
                               item=start.item if start else {}, events=events)  # fmt: skip
        export_session(self.tracer, self.header, record, content=self.content)


def export_transcript(path: Path, endpoint: str, *, content: bool = False, stream: TextIO | None = None) -> int:
    """Every session of a finished transcript (each attempt that ended) as a trace; the number exported."""
    _require_sdk()
    down = _unreachable(traces_url(endpoint))
    if down is not None:
        _warn_down(traces_url(endpoint), down, path, stream)
        return 0
    records: Iterable[Any] = iter_records(path)
    first = next(iter_records(path), None)
    tracer = Tracer(endpoint, _resource(first if isinstance(first, RunHeader) else None, path))
    sessions = _Sessions(tracer, content)
    for record in records:
        sessions.add(record)
    sessions.finish_all()
    tracer.close(stream)
    return tracer.sessions


class Follower:
    """Exports a running transcript's sessions as they end: a thread reads the lines appended since it began (the
    writer flushes every line), so the run itself has no hook and no wait on the collector."""

    POLL_S = 0.5

    def __init__(
        self, path: Path, endpoint: str, *, content: bool = False, fresh: bool = False, stream: TextIO | None = None
    ) -> None:
        self.path, self.stream = path, stream
        self.url = traces_url(endpoint)
        _require_sdk()
        # a collector that is down when the run starts costs the run nothing: no SDK, no thread, one warning
        self.down = _unreachable(self.url)
        self.tracer = Tracer(endpoint, {"voirdire.transcript": path.name}) if self.down is None else None
        self.sessions = _Sessions(self.tracer, content) if self.tracer is not None else None
        # a resumed file: only what this run adds (a fresh one is rewritten from its start)
        self._offset = path.stat().st_size if path.exists() and not fresh else 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._follow, name="voirdire-otel", daemon=True)

    def __enter__(self) -> Follower:
        if self.tracer is not None:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.tracer is None or self.sessions is None:
            _warn_down(self.url, self.down, self.path, self.stream)
            return
        self._stop.set()
        self._thread.join()
        self.poll()  # the last lines, written after the thread's last look
        self.sessions.finish_all()
        self.tracer.close(self.stream)

    def _follow(self) -> None:
        while not self._stop.wait(self.POLL_S):
            self.poll()

    def poll(self) -> None:
        try:
            with self.path.open("rb") as fh:
                fh.seek(self._offset)
                chunk = fh.read()
        except OSError:
            return
        complete = chunk[: chunk.rfind(b"\n") + 1]  # a line still being written waits for the next look
        self._offset += len(complete)
        for raw in complete.splitlines():
            try:
                if self.sessions is not None:
                    self.sessions.add(_LINE.validate_json(raw))
            except ValidationError:
                continue  # a line the report would skip too: not a reason to stop exporting
