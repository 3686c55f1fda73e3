"""Arize Phoenix as a receiver: found by its version route, and each verdict logged as a span annotation of its
session's span (label, score, explanation) through Phoenix's own client (``arize-phoenix-client``).

Phoenix keys a span annotation by its name, span and identifier, and sending one again updates it: an annotation
is as idempotent as the spans it annotates. Annotations go without waiting on Phoenix (``sync=False``): Phoenix
queues them and holds one whose span it has not stored yet until the span arrives.
"""

from __future__ import annotations

import re
import threading
import urllib.request
from collections.abc import Iterable
from typing import Any

from voirdire.base import VoirdireError, mask_secrets
from voirdire.integrations.otel_spans import Annotation

VERSION_PATH = "/arize_phoenix_version"  # Phoenix's server answers its version here; a collector does not
PROBE_TIMEOUT_S = 2.0
BATCH = 100  # annotations in one request


class PhoenixError(VoirdireError, RuntimeError):
    """Phoenix's annotations cannot be sent: its client is not installed, or the URL is not an http(s) URL."""


def base_url(url: str) -> str:
    """Phoenix's base URL from what a user gives: its address, or its OTLP traces URL (``/v1/traces`` dropped)."""
    url = url.strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise PhoenixError(f"--phoenix: {mask_secrets(url)!r} is not an http(s) URL of a Phoenix server")
    return url.removesuffix("/v1/traces").rstrip("/")


def phoenix_version(url: str) -> str | None:
    """The version of the Phoenix server at ``url`` (a base URL), or None when none answers there."""
    try:
        with urllib.request.urlopen(base_url(url) + VERSION_PATH, timeout=PROBE_TIMEOUT_S) as r:
            text = r.read(64).decode("utf-8", "replace").strip()
    except (OSError, ValueError):
        return None
    return text if re.fullmatch(r"\d+\.\d+[\w.+-]*", text) else None


class Annotations:
    """The verdicts waiting for their session's span to be sent, then logged to Phoenix as span annotations; a
    failure to send is counted and said once, never raised into the run."""

    def __init__(self, url: str) -> None:
        try:
            from phoenix.client import Client
        except ImportError:
            raise PhoenixError(
                "Phoenix annotations need its client: pip install 'voirdire[otel]' (arize-phoenix-client)"
            ) from None
        self.url = base_url(url)
        self.client = Client(base_url=self.url)
        self.waiting: dict[int, Annotation] = {}
        self.lock = threading.Lock()
        self.sent = 0
        self.unsent = 0
        self.failure: str | None = None

    def add(self, span_id: int, annotation: Annotation) -> None:
        with self.lock:
            self.waiting[span_id] = annotation

    def spans_sent(self, span_ids: Iterable[int]) -> None:
        """Log the annotations of the spans just sent (those that carry one)."""
        with self.lock:
            ready = [(sid, a) for sid in span_ids if (a := self.waiting.pop(sid, None)) is not None]
        for i in range(0, len(ready), BATCH):
            self._log(ready[i : i + BATCH])

    def spans_dropped(self, span_ids: Iterable[int]) -> None:
        with self.lock:
            self.unsent += sum(self.waiting.pop(sid, None) is not None for sid in span_ids)

    def close(self) -> None:
        with self.lock:
            self.unsent += len(self.waiting)  # sessions whose span never left
            self.waiting.clear()

    def _log(self, batch: list[tuple[int, Annotation]]) -> None:
        if self.failure is not None:
            self.unsent += len(batch)
            return
        data = [_data(span_id, a) for span_id, a in batch]
        try:
            self.client.spans.log_span_annotations(span_annotations=data, sync=False)
        except Exception as exc:  # an unreachable or refusing Phoenix is a warning, never the run's failure
            self.failure = mask_secrets(f"{type(exc).__name__}: {exc}")[:200]
            self.unsent += len(batch)
            return
        self.sent += len(batch)


def _data(span_id: int, a: Annotation) -> dict[str, Any]:
    result: dict[str, Any] = {"label": a.label, "explanation": a.explanation}
    if a.score is not None:
        result["score"] = a.score
    return {"name": a.name, "span_id": format(span_id, "016x"), "annotator_kind": a.kind, "result": result,
            "metadata": a.metadata}  # fmt: skip
