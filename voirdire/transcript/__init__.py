"""The one transcript schema shared by every protocol (``schema``), and its files (``io``).

A transcript is a JSONL file: each invocation of a run appends a ``header`` line (the run spec), then events
keyed by ``session_id``, ``stage`` and ``turn``. The file is append-only and flushed after every line, so it can
be read while a run is in progress; a torn last line (a crash mid-write) is ignored on read. Resume works on this
file alone: a session that already has a ``verdict`` event is finished. Which of a session's attempts counts is
``counting_attempt``'s answer, for every reader.
"""

from __future__ import annotations

from voirdire.transcript.io import (
    MemoryWriter,
    TranscriptWriter,
    bounded_lines,
    drop_torn_tail,
    iter_records,
    load,
    load_outline,
    load_session,
    max_line_bytes,
    read_lines,
)
from voirdire.transcript.schema import (
    CALL_COUNT_MAX,
    SCHEMA_VERSION,
    DisplayHints,
    ErrorEvent,
    Event,
    Line,
    Message,
    ModelCall,
    ParseFailure,
    RoleBinding,
    RunHeader,
    SessionRecord,
    SessionStart,
    Step,
    TokenUsage,
    Transcript,
    TranscriptError,
    Transition,
    Verdict,
    _Event,
    counting_attempt,
    new_run_id,
    reading_order,
    utcnow,
)
from voirdire.transcript.cache import CachedReply, ResponseCache, cacheable
from voirdire.transcript.step_views import Card, Cell, Column, StepView, Tone, VerdictView, Views, card_of, complete, generic_card, lookup

__all__ = [
    "CALL_COUNT_MAX",
    "CachedReply",
    "Card",
    "Cell",
    "Column",
    "DisplayHints",
    "ErrorEvent",
    "Event",
    "Line",
    "MemoryWriter",
    "Message",
    "ModelCall",
    "ParseFailure",
    "ResponseCache",
    "RoleBinding",
    "RunHeader",
    "SCHEMA_VERSION",
    "SessionRecord",
    "SessionStart",
    "Step",
    "StepView",
    "TokenUsage",
    "Tone",
    "Transcript",
    "TranscriptError",
    "TranscriptWriter",
    "Transition",
    "Verdict",
    "VerdictView",
    "Views",
    "_Event",
    "bounded_lines",
    "cacheable",
    "card_of",
    "complete",
    "counting_attempt",
    "drop_torn_tail",
    "generic_card",
    "iter_records",
    "load",
    "load_outline",
    "load_session",
    "lookup",
    "max_line_bytes",
    "new_run_id",
    "read_lines",
    "reading_order",
    "utcnow",
]
