"""Sessions as OpenTelemetry traces, for Phoenix, Langfuse, Opik, Jaeger or any OTLP collector.

One trace per session, built by ``otel_spans`` after the GenAI semantic conventions (with OpenInference's
attributes beside them, for Phoenix), from the transcript's events: a finished run's file, or a running one
followed as it grows, so the transcript stays the evidence and the run has no hook. The verdicts leave as
``gen_ai.evaluation.result`` log records through the OTLP logs exporter (OTLP/HTTP ``/v1/logs`` beside
``/v1/traces``), or as span events when asked; when the receiver is Arize Phoenix (``phoenix=URL``, or found at
the endpoint) each verdict is also a Phoenix span annotation (``phoenix``).

Trace and span ids are derived from the run and session ids, so a session sent twice repeats its ids; what each
receiver accepted is noted in the transcript's ledger (``otel_ledger``), and ``export_transcript`` sends only what
the receiver has not had, refusing when it has had everything (``resend=True`` sends it again).

The export is built on the OpenTelemetry SDK and its OTLP/HTTP exporters (the ``otel`` extra). A receiver that is
down never slows or fails a run: records leave in batches from background threads, a batch that cannot be sent
makes every later one be dropped at once, and one warning line says how many were dropped.
"""

from __future__ import annotations

import logging
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from pydantic import TypeAdapter, ValidationError

from voirdire.base import VoirdireError, mask_secrets, redact_url
from voirdire.integrations.otel_ledger import Ledger
from voirdire.integrations.otel_spans import Annotation, SpanOptions, export_session, id_generator
from voirdire.integrations.phoenix import Annotations, base_url, phoenix_version
from voirdire.transcript import ErrorEvent, Line, RunHeader, SessionRecord, SessionStart, Verdict, iter_records

ENDPOINT_ENV = "OTEL_EXPORTER_OTLP_ENDPOINT"
EXPORT_TIMEOUT_S = 2.0  # one batch's wait on a receiver: a down one costs this once, then records are dropped
QUEUE_MAX = 4096  # spans (and records) waiting to leave; beyond it the SDK drops them (memory stays bounded)
_LINE: TypeAdapter[Line] = TypeAdapter(Line)


class OtelError(VoirdireError, RuntimeError):
    """The export cannot start: the extra is not installed, or the endpoint is not a URL."""


class AlreadySent(OtelError):
    """Every session of the transcript was sent to this receiver before: nothing is sent twice unless asked."""


def traces_url(endpoint: str) -> str:
    """OTLP/HTTP's traces URL from what a user gives: a collector's base URL gets ``/v1/traces`` (as the SDK does
    with ``OTEL_EXPORTER_OTLP_ENDPOINT``); a URL already ending in it is kept."""
    endpoint = endpoint.strip()
    if not endpoint.startswith(("http://", "https://")):
        raise OtelError(f"--otel: {mask_secrets(endpoint)!r} is not an http(s) URL of an OTLP collector")
    return endpoint if endpoint.rstrip("/").endswith("/v1/traces") else endpoint.rstrip("/") + "/v1/traces"


def logs_url(endpoint: str) -> str:
    """OTLP/HTTP's logs URL beside the traces one: ``…/v1/logs``."""
    return traces_url(endpoint).rstrip("/").removesuffix("/v1/traces") + "/v1/logs"


def _require_sdk() -> None:
    import importlib.util

    if importlib.util.find_spec("opentelemetry.sdk") is None:
        raise OtelError("OpenTelemetry export needs the otel extra: pip install 'voirdire[otel]'")


def _warn(line: str, stream: TextIO | None) -> None:
    print(f"warning: otel: {mask_secrets(line)}", file=stream or sys.stderr)


def _warn_down(url: str, why: str | None, path: Path, stream: TextIO | None) -> None:
    _warn(f"spans not sent to {url} ({why}); the transcript holds every event: "
          f"`voirdire export otel {path} --endpoint URL` sends them later", stream)  # fmt: skip


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


def _refuses_logs(url: str) -> str | None:
    """Why the receiver takes no OTLP logs at ``url`` (``HTTP 404``: a traces-only backend), or None when an
    empty export request is accepted there."""
    request = urllib.request.Request(url, data=b"", method="POST", headers={"Content-Type": "application/x-protobuf"})
    try:
        urllib.request.urlopen(request, timeout=EXPORT_TIMEOUT_S).close()
    except urllib.error.HTTPError as exc:
        return f"HTTP {exc.code}"
    except OSError as exc:
        return f"cannot connect: {getattr(exc, 'reason', None) or type(exc).__name__}"
    return None


class _Guarded:
    """An OTLP exporter (spans or log records), counting what could not be sent: after the first failure every
    batch is dropped at once (no batch waits on a receiver known to be down); ``on_sent`` hears of each batch
    that was accepted, ``on_dropped`` of each that was not."""

    def __init__(self, inner: Any, url: str, results: Any) -> None:
        self.inner, self.url, self.results = inner, url, results
        self.sent = 0
        self.dropped = 0
        self.failure: str | None = None
        self.reached = False
        self.on_sent: Callable[[Sequence[Any]], None] = lambda batch: None
        self.on_dropped: Callable[[Sequence[Any]], None] = lambda batch: None

    def export(self, batch: Sequence[Any]) -> Any:
        if self.failure is None and not self.reached:
            self.failure = _unreachable(self.url)  # refused at once: no batch waits out the SDK's retries
            self.reached = self.failure is None
        if self.failure is None:
            try:
                result = self.inner.export(batch)
            except Exception as exc:  # any transport failure is "receiver down", never the run's
                result, self.failure = self.results.FAILURE, type(exc).__name__
            if result == self.results.SUCCESS:
                self.sent += len(batch)
                self.on_sent(batch)
                return result
            self.failure = self.failure or "the receiver refused or did not answer"
        self.dropped += len(batch)
        self.on_dropped(batch)
        return self.results.SUCCESS  # dropped on purpose: the SDK need not log or retry it

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def receivers(endpoint: str | None, phoenix: str | None) -> tuple[str, str | None]:
    """The OTLP endpoint and the Phoenix server (None: not Phoenix): ``phoenix`` alone is both; an endpoint that
    answers Phoenix's version route is Phoenix."""
    if phoenix:
        return (endpoint or base_url(phoenix)), base_url(phoenix)
    if not endpoint:
        raise OtelError("export otel: --endpoint URL (an OTLP/HTTP receiver) or --phoenix URL")
    return endpoint, (base_url(traces_url(endpoint)) if phoenix_version(traces_url(endpoint)) else None)


class Tracer:
    """Tracer and logger providers of their own (the application's global ones are left alone), exporting to
    ``endpoint``; the verdicts' annotations to ``phoenix`` when given; accepted sessions noted in ``ledger``."""

    def __init__(
        self,
        endpoint: str,
        resource: Mapping[str, str],
        *,
        phoenix: str | None = None,
        options: SpanOptions | None = None,
        ledger: Ledger | None = None,
    ) -> None:
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExportResult
        except ImportError:
            raise OtelError("OpenTelemetry export needs the otel extra: pip install 'voirdire[otel]'") from None
        for name in ("opentelemetry.exporter.otlp.proto.http", "opentelemetry.sdk.trace.export",
                     "opentelemetry.sdk._logs", "opentelemetry.sdk._shared_internal"):  # fmt: skip
            logging.getLogger(name).setLevel(logging.CRITICAL)  # one warning line of our own instead of tracebacks
        self.options, self.ledger = options or SpanOptions(), ledger
        self.annotations = Annotations(phoenix) if phoenix else None
        url = traces_url(endpoint)
        self.exporter = _Guarded(OTLPSpanExporter(endpoint=url, timeout=EXPORT_TIMEOUT_S), url, SpanExportResult)
        self.exporter.on_sent, self.exporter.on_dropped = self._spans_sent, self._spans_dropped
        self.resource = Resource.create({"service.name": "voirdire", **resource})
        self.ids = id_generator()
        self.provider = TracerProvider(resource=self.resource, id_generator=self.ids)
        self.provider.add_span_processor(
            BatchSpanProcessor(self.exporter, max_queue_size=QUEUE_MAX, schedule_delay_millis=500)  # type: ignore[arg-type]
        )
        self.tracer = self.provider.get_tracer("voirdire")
        self.logger: Any = None
        self.logs: Any = None
        self.logs_refused: str | None = None
        phoenix_receives = phoenix is not None and base_url(url) == base_url(phoenix)
        if not self.options.span_events and not phoenix_receives:  # Phoenix takes no logs: its annotations say it
            self._logs(logs_url(endpoint))
        self.lock = threading.Lock()
        self.sessions = 0
        self.verdicts = 0

    def _logs(self, url: str) -> None:
        self.logs_refused = _refuses_logs(url)
        if self.logs_refused is not None:
            return
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
        from opentelemetry.sdk._logs import LoggerProvider
        from opentelemetry.sdk._logs.export import BatchLogRecordProcessor, LogRecordExportResult

        self.logs = _Guarded(OTLPLogExporter(endpoint=url, timeout=EXPORT_TIMEOUT_S), url, LogRecordExportResult)
        self.log_provider = LoggerProvider(resource=self.resource)
        self.log_provider.add_log_record_processor(
            BatchLogRecordProcessor(self.logs, max_queue_size=QUEUE_MAX, schedule_delay_millis=500)  # type: ignore[arg-type]
        )
        self.logger = self.log_provider.get_logger("voirdire")

    def export(self, header: RunHeader | None, session: SessionRecord) -> None:
        with self.lock:  # the ids handed to the SDK are set just before each span starts: one session at a time
            export_session(self, header, session, self.options)
            self.sessions += 1

    def annotate(self, span_id: int, annotation: Annotation) -> None:
        self.verdicts += 1
        if self.annotations is not None:
            self.annotations.add(span_id, annotation)

    def _spans_sent(self, spans: Sequence[Any]) -> None:
        roots = [s for s in spans if s.parent is None]
        if self.ledger is not None:
            self.ledger.record((str(s.attributes.get("voirdire.run.id", "")), str(s.attributes.get(
                "voirdire.session.id", "")), format(s.context.trace_id, "032x")) for s in roots)  # fmt: skip
        if self.annotations is not None:
            self.annotations.spans_sent(s.context.span_id for s in roots)

    def _spans_dropped(self, spans: Sequence[Any]) -> None:
        if self.annotations is not None:
            self.annotations.spans_dropped(s.context.span_id for s in spans if s.parent is None)

    def close(self, stream: TextIO | None = None) -> None:
        self.provider.shutdown()  # sends what is queued (a down receiver: dropped at once)
        if self.logs is not None:
            self.log_provider.shutdown()
        for warning in self.warnings():
            _warn(warning, stream)

    def warnings(self) -> list[str]:
        """One line for each thing that did not reach its receiver (the transcript holds every event)."""
        found = []
        for kind, exporter in (("spans", self.exporter), ("verdict records", self.logs)):
            if exporter is not None and exporter.failure is not None:
                found.append(f"{exporter.dropped} {kind} not sent to {exporter.url} ({exporter.failure}); the "
                             "transcript holds every event")  # fmt: skip
        if self.logs_refused is not None and self.verdicts:
            n = self.verdicts
            found.append(f"{logs_url(self.exporter.url)} takes no OTLP logs ({self.logs_refused}): {n} "
                         f"verdict{'s' * (n != 1)} not sent as gen_ai.evaluation.result records; --otel-span-events "
                         "sends them as events of the session spans")  # fmt: skip
        if self.annotations is not None:
            self.annotations.close()
            if self.annotations.unsent:
                why = self.annotations.failure or "their spans were not sent"
                found.append(f"{self.annotations.unsent} verdicts not annotated in Phoenix at {self.annotations.url} "
                             f"({why})")  # fmt: skip
        if self.ledger is not None and self.ledger.failure is not None:
            found.append(f"what was sent is not noted ({self.ledger.failure}): exporting again is not refused")
        return found


def _resource(header: RunHeader | None, path: Path) -> dict[str, str]:
    named = {"voirdire.transcript": path.name}
    if header is not None:
        named |= {"voirdire.protocol": header.protocol, "voirdire.run.id": header.run_id}
    return named


class _Sessions:
    """Events gathered per session until its verdict or error, then exported and forgotten: memory holds only
    the sessions in flight. Sessions in ``skip`` (already sent) are passed over and counted."""

    def __init__(self, tracer: Tracer, skip: set[tuple[str, str]] | None = None) -> None:
        self.tracer = tracer
        self.skip = skip or set()
        self.skipped: set[tuple[str, str]] = set()
        self.header: RunHeader | None = None
        self.open: dict[tuple[str, str], list[Any]] = {}

    def add(self, record: Any) -> None:
        if isinstance(record, RunHeader):
            self.header = record
            return
        key = (record.run_id, record.session_id)
        if key in self.skip:
            self.skipped.add(key)
            return
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
        self.tracer.export(self.header, record)


def export_transcript(
    path: Path,
    endpoint: str | None,
    *,
    content: bool = False,
    phoenix: str | None = None,
    span_events: bool = False,
    resend: bool = False,
    stream: TextIO | None = None,
) -> int:
    """Every session of a finished transcript (each attempt that ended) as a trace; the number exported. Sessions
    this receiver accepted before are passed over (``resend``: sent again, with the same ids); when there is
    nothing else, ``AlreadySent``."""
    _require_sdk()
    endpoint, phoenix = receivers(endpoint, phoenix)
    url = traces_url(endpoint)
    down = _unreachable(url)
    if down is not None:
        _warn_down(url, down, path, stream)
        return 0
    first = next(iter_records(path), None)
    ledger = Ledger(path, url)
    tracer = Tracer(endpoint, _resource(first if isinstance(first, RunHeader) else None, path), phoenix=phoenix,
                    options=SpanOptions(content=content, span_events=span_events), ledger=ledger)  # fmt: skip
    sessions = _Sessions(tracer, skip=set() if resend else ledger.sent())
    records: Iterable[Any] = iter_records(path)
    for record in records:
        sessions.add(record)
    sessions.finish_all()
    tracer.close(stream)
    skipped = len(sessions.skipped)
    if skipped and not tracer.sessions:
        raise AlreadySent(
            f"export otel: the {skipped} session{'s' * (skipped != 1)} of {path.name} were sent to {redact_url(url)} "
            f"already (noted in "
            f"{ledger.path.name}); --resend sends them again, with the same trace and span ids"
        )
    if skipped:
        print(f"{path}: {skipped} session{'s' * (skipped != 1)} sent to {redact_url(url)} before were not sent again "
              "(--resend sends them)", file=stream or sys.stderr)  # fmt: skip
    return tracer.sessions


class Follower:
    """Exports a running transcript's sessions as they end: a thread reads the lines appended since it began (the
    writer flushes every line), so the run itself has no hook and no wait on the receiver."""

    POLL_S = 0.5

    def __init__(
        self,
        path: Path,
        endpoint: str | None,
        *,
        content: bool = False,
        fresh: bool = False,
        phoenix: str | None = None,
        span_events: bool = False,
        stream: TextIO | None = None,
    ) -> None:
        self.path, self.stream = path, stream
        _require_sdk()
        if not endpoint and not phoenix:
            raise OtelError("--otel URL (an OTLP/HTTP receiver) or --phoenix URL")
        self.url = traces_url(endpoint) if endpoint else traces_url(base_url(phoenix or ""))
        # a receiver that is down when the run starts costs the run nothing: no SDK, no thread, one warning
        self.down = _unreachable(self.url)
        self.tracer: Tracer | None = None
        if self.down is None:
            endpoint, phoenix = receivers(endpoint, phoenix)
            options = SpanOptions(content=content, span_events=span_events)
            self.tracer = Tracer(endpoint, {"voirdire.transcript": path.name}, phoenix=phoenix, options=options,
                                 ledger=Ledger(path, self.url))  # fmt: skip
        self.sessions = _Sessions(self.tracer) if self.tracer is not None else None
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
