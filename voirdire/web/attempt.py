"""One run's attempt at one session as the transcript index keeps it (``voirdire.web.index``): where its lines are
and what they say, counted line by line as the scan reads them, and stored as one ledger row."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, fields
from typing import Any

from pydantic import TypeAdapter

from voirdire.base import token_count
from voirdire.transcript import CALL_COUNT_MAX, CallTally


@dataclass
class Attempt:
    """One run's attempt at one session: where its lines are and what they say."""

    sid: str
    rid: str
    spans: list[list[int]] | str = field(default_factory=list)
    """[offset, length] of each run of consecutive lines; kept as text ("o,l;o,l") until needed after a load."""
    start: list[int] | None = None  # [offset, length] of its session_start line
    item_id: str | None = None
    title: str = ""
    events: int = 0
    messages: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    retries: int = 0
    parse_failures: int = 0
    errors: int = 0
    error: str | None = None
    state: str | None = None
    decision: str | None = None
    accepted: bool | None = None
    correct: bool | None = None
    gold_checked: bool = False
    human: bool = False
    models: dict[str, CallTally] = field(default_factory=dict)
    """model -> its calls, counted by the rule every reader of model calls follows"""
    first: str | None = None
    last: str | None = None

    @property
    def status(self) -> str:
        if self.decision is not None:
            return "finished"
        return "error" if self.errors else "running"

    def span_list(self) -> list[list[int]]:
        if isinstance(self.spans, str):
            self.spans = [[int(n) for n in s.split(",")] for s in self.spans.split(";") if s]
        return self.spans

    @property
    def end(self) -> int:
        spans = self.span_list()
        return spans[-1][0] + spans[-1][1] if spans else 0

    def add_span(self, offset: int, length: int) -> None:
        spans = self.span_list()
        if spans and spans[-1][0] + spans[-1][1] == offset:
            spans[-1][1] += length
        else:
            spans.append([offset, length])

    def row(self) -> list[Any]:
        """The attempt as the index file stores it (fields in order, spans as text)."""
        spans = self.spans if isinstance(self.spans, str) else ";".join(f"{o},{n}" for o, n in self.spans)
        models = {model: [getattr(tally, n) for n in _TALLY] for model, tally in self.models.items()}  # its row()
        return [spans if name == "spans" else models if name == "models" else getattr(self, name) for name in FIELDS]

    def count(self, kind: str, rec: dict[str, Any]) -> str | None:
        """Count one record of a kind that only adds to the attempt's tallies (messages, model calls, parse
        failures, errors, transitions); what is wrong with a record that cannot be counted, else None."""
        if kind == "message":
            self.messages += 1
        elif kind == "model_call":
            return self.count_call(rec)
        elif kind == "parse_failure":
            self.parse_failures += 1
        elif kind == "error":
            self.errors += 1
            self.error = f"{rec.get('error_type')}: {rec.get('message')}"
            self.retries += call_count(rec.get("retries") or 0) or 0  # the retries of a call given up on
        elif kind == "transition":
            self.state = rec.get("to_state")
        return None

    def count_call(self, rec: dict[str, Any]) -> str | None:
        """Count one model call; a forged or garbled one is not counted, and what is wrong with it returned."""
        usage = rec.get("usage") or {}
        p, c = token_count(usage.get("prompt_tokens", 0)), token_count(usage.get("completion_tokens", 0))
        t = rec["latency_s"]
        if p is None or c is None or not isinstance(t, int | float):
            return "usage counts that are not token counts"
        retries, requests = call_count(rec.get("retries", 0)), call_count(rec.get("requests", 1))
        if retries is None or requests is None:
            return f"request or retry counts that are not whole numbers from 0 to {CALL_COUNT_MAX:,}"
        self.calls += 1
        self.prompt_tokens += p
        self.completion_tokens += c
        self.latency_s += t
        self.retries += retries
        tally = self.models.get(rec["model"])
        if tally is None:
            tally = self.models[rec["model"]] = CallTally()
        cached, coalesced = bool(rec.get("cached")), bool(rec.get("coalesced"))
        # The provider's prompt cache, where it cached (parts of the prompt tokens, priced at their own rates).
        read = token_count(usage.get("cache_read_tokens", 0)) or 0
        write = token_count(usage.get("cache_write_tokens", 0)) or 0
        tally.count(p, c, requests=requests, cached=cached, coalesced=coalesced, latency_s=t,
                    cache_read=min(read, p), cache_write=min(write, p))  # fmt: skip
        self.human = self.human or rec["model"] == "human"
        return None


@dataclass
class HeaderRef:
    run_id: str
    offset: int
    length: int


class Forged(ValueError):
    """A ledger row that is no attempt this index wrote."""


FIELDS = tuple(f.name for f in fields(Attempt))
_TALLY = tuple(f.name for f in fields(CallTally))  # CallTally.row()'s order, read without a deep copy
_ATTEMPT = TypeAdapter(Attempt)
_SPANS = re.compile(r"(?:\d{1,15},\d{1,15}(?:;|$))*")


def attempt_of(text: Any, *, trusted: bool) -> Attempt:
    """An attempt from its ledger row; checked (``Forged`` if it does not check out) unless ``trusted`` (this
    process wrote every row itself)."""
    try:
        values = dict(zip(FIELDS, json.loads(text), strict=True))
        values["models"] = {str(m): CallTally.from_row(r) for m, r in dict(values["models"]).items()}
        if trusted:
            return Attempt(**values)
        a = _ATTEMPT.validate_python(values)
        if isinstance(a.spans, str) and not _SPANS.fullmatch(a.spans):
            raise ValueError("spans")
        return a
    except (ValueError, TypeError, KeyError) as exc:
        raise Forged(str(exc)) from None


def call_count(value: object) -> int | None:
    """A model call's request or retry count when it is a whole number from 0 to ``CALL_COUNT_MAX``."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= CALL_COUNT_MAX:
        return value
    return None
