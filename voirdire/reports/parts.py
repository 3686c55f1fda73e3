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
from typing import Any, NamedTuple, Protocol

from voirdire.reports.stability import REPEAT_STEP
from voirdire.transcript import (
    CallTally,
    ErrorEvent,
    Message,
    ModelCall,
    ParseFailure,
    SessionRecord,
    SessionStart,
    Step,
    Verdict,
)


class SessionFold(Protocol):
    """What ``fold_session`` needs of a ``ReportFold``: its value of a session."""

    session: Callable[[SessionRecord], Any]


class Folded(NamedTuple):
    """One attempt of a session as ``ReportBuilder`` keeps it (picklable when the fold's value is)."""

    session_id: str
    run_id: str
    verdict: bool  # the attempt reached a verdict
    counts: tuple[Any, ...]  # ``session_counts``
    value: Any  # the protocol fold's ``session`` of it
    repeat: tuple[Any, Any] | None  # ``repeat_of``
    calls: tuple[tuple[str, str, CallTally], ...]  # (role, model, its calls), in order of each's first call


def category(value: Any) -> Any:
    """One copy of a categorical string (a decision, a label, a system's name) however many sessions a fold keeps
    it for (``sys.intern``); any other value as it is."""
    return sys.intern(value) if type(value) is str else value


def session_record(sid: str, run_id: str, events: list[Any]) -> SessionRecord:
    """One attempt's events (sorted here by ``seq``) as the session a fold is given."""
    events.sort(key=lambda e: e.seq)
    start = next((e for e in events if isinstance(e, SessionStart)), None)
    # The item id is usually the session id: one string for both, not one more per session a fold keeps.
    item_id = (sid if start.item_id == sid else start.item_id) if start else None
    return SessionRecord.model_construct(
        session_id=sid, run_id=run_id, item_id=item_id, item=start.item if start else {}, events=events
    )


def session_counts(s: SessionRecord, verdict: bool) -> tuple[Any, ...]:
    """(verdict, error without a verdict, ((role · prompt, parse failures), ...), ((role · prompt, replies), ...))."""
    failures: Counter[str] = Counter()
    replies: Counter[str] = Counter()
    for e in s.events:
        if isinstance(e, ParseFailure):
            failures[f"{e.role} · {e.prompt or 'text'}"] += 1
        elif isinstance(e, Message) and e.receiver == "moderator":
            replies[f"{e.sender} · {e.prompt or 'text'}"] += 1
    error = not verdict and any(isinstance(e, ErrorEvent) for e in s.events)
    return (verdict, error, tuple(failures.items()), tuple(replies.items()))


def repeat_of(s: SessionRecord) -> tuple[Any, Any] | None:
    """A repeated session's (item, decision), None for a session that is not a repeat (marked by its first step,
    ``repeat``)."""
    if not any(isinstance(e, Step) and e.name == REPEAT_STEP for e in s.events):
        return None
    v = next((e for e in reversed(s.events) if isinstance(e, Verdict)), None)
    return (category(s.item_id or s.session_id), category(v.decision) if v else None)


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
    verdict = any(isinstance(e, Verdict) for e in s.events)
    return Folded(
        s.session_id,
        s.run_id,
        verdict,
        session_counts(s, verdict),
        fold.session(s),
        repeat_of(s),
        tuple((role, model, t) for (role, model), t in calls.items()),
    )
