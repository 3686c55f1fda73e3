"""A transcript as pandas DataFrames: one row per session, per turn (a message of the chat) and per verdict.

``voirdire.load(path)`` returns a ``LoadedTranscript``: the ``Transcript`` with ``sessions_frame()``,
``turns_frame()`` and ``verdicts_frame()``. Rows carry the item's fields (``item.<field>``), each role's model
(``model.<role>``, from the run header), tokens and requests counted by the one tally of model calls
(``CallTally``: cached replies apart, never billed), the cost when a price table is known (``cost_usd``; None where a
billed model has no price, never 0), and people's labels when the run has a labels sidecar
(``<transcript>.labels.jsonl``). The session that counts is ``load``'s (``counting_attempt``), as every reader's.

Cells are what Parquet holds as they are: scalars, lists of scalars, and JSON text for anything nested (a verdict
statistic that is a list of objects), so a frame written to Parquet reads back equal. pandas is imported only when
a frame is built.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import PrivateAttr

from voirdire.transcript.calls import CallTally
from voirdire.transcript.schema import (
    ErrorEvent,
    Message,
    ModelCall,
    ParseFailure,
    RunHeader,
    SessionRecord,
    Transcript,
    Verdict,
    reading_order,
)
from voirdire.transcript.sidecar import HumanLabel, current_labels, read_sidecar, sidecar_path

if TYPE_CHECKING:
    import pandas as pd

CostOf = Callable[[Mapping[str, tuple[int, int, int]]], float | None]
"""The cost in USD of billed usage (model label -> billed prompt tokens, completion tokens, requests); None when a
billed model has no price (``voirdire.reports.run_cost`` is the one rule; the API layer passes it in)."""

TABLES = ("sessions", "turns", "verdicts")


class LoadedTranscript(Transcript):
    """A transcript read back, with its frames (``voirdire.load``)."""

    _cost_of: CostOf | None = PrivateAttr(default=None)

    @classmethod
    def of(cls, transcript: Transcript, cost_of: CostOf | None = None) -> LoadedTranscript:
        """``transcript``'s sessions and headers as they are (not validated again)."""
        loaded = cls.model_construct(path=transcript.path, headers=transcript.headers, sessions=transcript.sessions)
        loaded._cost_of = cost_of
        return loaded

    def sessions_frame(self) -> pd.DataFrame:
        """One row per session: ids, item fields, each role's model, calls, tokens, cost, errors, the decision,
        and labels when a sidecar exists."""
        return _frame(sessions_rows(self, self._cost_of))

    def turns_frame(self) -> pd.DataFrame:
        """One row per message of each session's chat, in reading order within a session, with the model call
        that produced it (its model, tokens, cost) where one did."""
        return _frame(turns_rows(self, self._cost_of))

    def verdicts_frame(self) -> pd.DataFrame:
        """One row per verdict (a finished session): the decision, acceptance, evidence, the verdict's
        statistics (``stat.<name>``), item fields, models, tokens, cost, and labels when a sidecar exists."""
        return _frame(verdicts_rows(self, self._cost_of))

    def frame(self, table: str) -> pd.DataFrame:
        """The frame named ``table``: ``sessions``, ``turns`` or ``verdicts``."""
        if table not in TABLES:
            raise ValueError(f"no table {table!r}: use {', '.join(TABLES)}")
        built: pd.DataFrame = getattr(self, f"{table}_frame")()
        return built


def _frame(rows: Iterable[dict[str, Any]]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame.from_records(list(rows))


def cell(value: Any) -> Any:
    """A value as a frame holds it: scalars and lists of scalars of one kind as they are, else JSON text."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, list | tuple) and _one_scalar_kind(value):
        return list(value)
    return json.dumps(value, ensure_ascii=False, default=str)


def _one_scalar_kind(values: list[Any] | tuple[Any, ...]) -> bool:
    kinds = {bool if isinstance(v, bool) else str if isinstance(v, str) else float for v in values}
    return all(isinstance(v, str | bool | int | float) for v in values) and len(kinds) <= 1


def _models(header: RunHeader | None) -> dict[str, str]:
    return {f"model.{role}": binding.spec for role, binding in (header.roles if header else {}).items()}


def _tally_of(calls: Iterable[ModelCall]) -> tuple[CallTally, dict[str, tuple[int, int, int]]]:
    """The session's calls counted, and its billed usage per model label (what a cost is priced from)."""
    total = CallTally()
    by_label: dict[str, CallTally] = {}
    for call in calls:
        total.count_call(call)
        by_label.setdefault(call.model, CallTally()).count_call(call)
    return total, {label: tally.billed for label, tally in by_label.items()}


def _usage_columns(calls: list[ModelCall], cost_of: CostOf | None) -> dict[str, Any]:
    tally, billed = _tally_of(calls)
    return {
        "calls": tally.calls,
        "requests": tally.requests,
        "prompt_tokens": tally.prompt_tokens,
        "completion_tokens": tally.completion_tokens,
        "cached_calls": tally.cached_calls,
        "cached_prompt_tokens": tally.cached_prompt_tokens,
        "cached_completion_tokens": tally.cached_completion_tokens,
        "latency_s": tally.latency_s,
        "cost_usd": cost_of(billed) if cost_of is not None else None,
    }


def _label_columns(labels: Mapping[str, list[HumanLabel]] | None, item_id: str | None) -> dict[str, Any]:
    """The latest current label of the item (by any annotator), its reading, and how many annotators labelled
    it; no columns at all when the run has no sidecar."""
    if labels is None:
        return {}
    given = labels.get(item_id or "", [])
    latest = max(given, key=lambda label: label.time, default=None)
    return {
        "label": latest.label if latest else None,
        "label_reading": latest.reading if latest else None,
        "label_annotator": latest.annotator if latest else None,
        "label_annotators": len(given),
    }


def labels_by_item(transcript: Transcript) -> dict[str, list[HumanLabel]] | None:
    """Each item's current labels (one per annotator), or None when the transcript has no sidecar."""
    if not sidecar_path(transcript.path).exists():
        return None
    out: dict[str, list[HumanLabel]] = {}
    for (item_id, _), label in current_labels(read_sidecar(transcript.path)).items():
        out.setdefault(item_id, []).append(label)
    return out


def _session_base(
    transcript: Transcript, session: SessionRecord, models: Mapping[str, str]
) -> dict[str, Any]:
    header = transcript.header
    row: dict[str, Any] = {
        "session_id": session.session_id,
        "run_id": session.run_id,
        "item_id": session.item_id,
        "protocol": header.protocol if header else None,
    }
    row.update({f"item.{name}": cell(value) for name, value in session.item.items()})
    row.update(models)
    return row


def sessions_rows(transcript: Transcript, cost_of: CostOf | None = None) -> Iterator[dict[str, Any]]:
    models = _models(transcript.header)
    labels = labels_by_item(transcript)
    for session in transcript.sessions.values():
        calls, errors, failures, verdict = [], [], 0, None
        for event in session.events:  # one pass: a session's events are walked once for every column
            if isinstance(event, ModelCall):
                calls.append(event)
            elif isinstance(event, ErrorEvent):
                errors.append(event)
            elif isinstance(event, ParseFailure):
                failures += 1
            elif isinstance(event, Verdict):
                verdict = event
        row = _session_base(transcript, session, models)
        row.update(_usage_columns(calls, cost_of))
        row.update(
            {
                "finished": verdict is not None,
                "decision": verdict.decision if verdict else None,
                "accepted": verdict.accepted if verdict else None,
                "errors": len(errors),
                "error": f"{errors[-1].error_type}: {errors[-1].message}" if errors else None,
                "parse_failures": failures,
            }
        )
        row.update(_label_columns(labels, session.item_id))
        yield row


def verdicts_rows(transcript: Transcript, cost_of: CostOf | None = None) -> Iterator[dict[str, Any]]:
    models = _models(transcript.header)
    labels = labels_by_item(transcript)
    for session in transcript.sessions.values():
        verdict = session.verdict
        if verdict is None:
            continue
        row = _session_base(transcript, session, models)
        row.update(
            {
                "decision": verdict.decision,
                "accepted": verdict.accepted,
                "evidence": list(verdict.evidence),
                "time": verdict.time,
            }
        )
        row.update({f"stat.{name}": cell(value) for name, value in verdict.statistics.items()})
        row.update(_usage_columns(session.of_kind(ModelCall), cost_of))
        row.update(_label_columns(labels, session.item_id))
        yield row


def turns_rows(transcript: Transcript, cost_of: CostOf | None = None) -> Iterator[dict[str, Any]]:
    """A message's model call is the call its sender made last on the same branch before it (a call is recorded
    just before the message that carries its reply); the further samples of one call share its model, while its
    tokens and cost are on the first sample's row only, so that a call is counted once. Tokens are the billed
    ones (a cached reply's are not: ``cached`` says so), as in the sessions frame."""
    for session in transcript.sessions.values():
        pending: dict[tuple[str | None, str], ModelCall] = {}
        last_model: dict[tuple[str | None, str], str] = {}
        index = 0
        for event in reading_order(session.events):
            if isinstance(event, ModelCall):
                pending[(event.branch, event.role)] = event
                last_model[(event.branch, event.role)] = event.model
                continue
            if not isinstance(event, Message):
                continue
            key = (event.branch, event.sender)
            call = pending.pop(key, None)
            row: dict[str, Any] = {
                "session_id": session.session_id,
                "item_id": session.item_id,
                "turn_index": index,
                "seq": event.seq,
                "time": event.time,
                "stage": event.stage,
                "turn": event.turn,
                "branch": event.branch,
                "sender": event.sender,
                "receiver": event.receiver,
                "content": event.content,
                "prompt": event.prompt,
                "sample": event.sample,
                "model": last_model.get(key),
                "cached": call.cached if call else None,
            }
            row.update(_turn_usage(call, cost_of))
            index += 1
            yield row


def _turn_usage(call: ModelCall | None, cost_of: CostOf | None) -> dict[str, Any]:
    if call is None:
        return {"prompt_tokens": 0, "completion_tokens": 0, "requests": 0, "latency_s": 0.0, "cost_usd": 0.0}
    tally, billed = _tally_of([call])
    return {
        "prompt_tokens": tally.prompt_tokens,
        "completion_tokens": tally.completion_tokens,
        "requests": tally.requests,
        "latency_s": call.latency_s,
        "cost_usd": cost_of(billed) if cost_of is not None else None,
    }
