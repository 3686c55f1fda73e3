"""What a report keeps of one session, computed from its records where the session ran.

``ReportBuilder`` folds a transcript's records: it gathers a session's events, and when the session ends keeps a
small part of it (whether it reached a verdict, its counts, the protocol's value, its repeat, its model calls) and
drops the events. A ``--workers`` worker has a session's records as objects before it serialises them for the run's
process; folding them there (``fold_session``) and sending the ``Folded`` part with the session's end lets the run's
process fold its report as the records are written (``ReportBuilder.add_folded``) instead of reading the whole
transcript back and parsing every record again at the end. The functions here are the builder's own, so a part
folded in a worker is the part the builder keeps reading the file back.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Any, NamedTuple, Protocol

from voirdire.transcript import (
    REPEAT_STEP,
    CallTally,
    ErrorEvent,
    Message,
    ModelCall,
    ParseFailure,
    SessionRecord,
    SessionStart,
    Step,
    Verdict,
    repeat_of,
)


class SessionFold(Protocol):
    """What ``fold_session`` needs of a ``ReportFold``: its value of a session."""

    session: Callable[[SessionRecord], Any]


class Folded(NamedTuple):
    """One attempt of a session as ``ReportBuilder`` keeps it (picklable when the fold's value is)."""

    session_id: str
    run_id: str
    verdict: bool  # the attempt reached a verdict
    counts: tuple[Any, ...]  # ``session_parts``
    value: Any  # the protocol fold's ``session`` of it
    repeat: tuple[Any, Any] | None  # ``session_parts``
    calls: tuple[tuple[str, str, CallTally], ...]  # (role, model, its calls), in order of each's first call


def category(value: Any) -> Any:
    """One copy of a categorical string (a decision, a label, a system's name) however many sessions a fold keeps
    it for (``sys.intern``); any other value as it is."""
    return sys.intern(value) if type(value) is str else value


_SEQ = attrgetter("seq")


def session_record(sid: str, run_id: str, events: list[Any]) -> SessionRecord:
    """One attempt's events (sorted here by ``seq``) as the session a fold is given."""
    events.sort(key=_SEQ)
    start = next((e for e in events if isinstance(e, SessionStart)), None)
    # The item id is usually the session id: one string for both, not one more per session a fold keeps.
    item_id = (sid if start.item_id == sid else start.item_id) if start else None
    return SessionRecord.model_construct(
        session_id=sid,
        run_id=run_id,
        item_id=item_id,
        item=start.item if start else {},
        events=events,
        repeat=repeat_of(start, events),
    )


def session_parts(s: SessionRecord) -> tuple[bool, tuple[Any, ...], tuple[Any, Any] | None]:
    """What the builder keeps of an attempt besides the protocol's value, in one pass over its events: whether it
    reached a verdict, its counts -- (verdict, error without a verdict, ((role · prompt, parse failures), ...),
    ((role · prompt, replies), ...)) -- and, for a repeated session (``SessionRecord.repeat``), its (item,
    decision); None for a session that is not a repeat. One pass, since this runs for every session a run's live
    report folds (three passes took a sixth of the fold's CPU)."""
    failures: Counter[str] = Counter()
    replies: Counter[str] = Counter()
    last: Verdict | None = None
    error = False
    rule: Any = None
    for e in s.events:
        if isinstance(e, Message):
            if e.receiver == "moderator":
                replies[f"{e.sender} · {e.prompt or 'text'}"] += 1
        elif isinstance(e, Verdict):
            last = e
        elif isinstance(e, ParseFailure):
            failures[f"{e.role} · {e.prompt or 'text'}"] += 1
        elif isinstance(e, ErrorEvent):
            error = True
        elif isinstance(e, Step) and e.name == REPEAT_STEP and e.data.get("stop_when_decided") is not None:
            # sequential repeats: N planned, stopped at this share
            rule = (e.data.get("repeats"), e.data["stop_when_decided"])
    verdict = last is not None
    counts = (verdict, error and not verdict, tuple(failures.items()), tuple(replies.items()))
    repeat = None
    if s.repeat is not None:
        repeat = (category(s.item_id or s.session_id), category(last.decision) if last is not None else None)
        if rule is not None:
            repeat = (*repeat, rule)
    return verdict, counts, repeat


def fold_session(fold: SessionFold, records: Sequence[Any]) -> Folded:
    """One attempt of one session, from its records as its process wrote them (in any order), folded by ``fold``."""
    first = records[0]
    calls: dict[tuple[str, str], CallTally] = {}
    for e in records:
        if isinstance(e, ModelCall):
            tally = calls.get((e.role, e.model))
            if tally is None:
                tally = calls[(e.role, e.model)] = CallTally()
            tally.count_call(e)
    s = session_record(first.session_id, first.run_id, list(records))
    verdict, counts, repeat = session_parts(s)
    return Folded(
        s.session_id,
        s.run_id,
        verdict,
        counts,
        fold.session(s),
        repeat,
        tuple((role, model, t) for (role, model), t in calls.items()),
    )
