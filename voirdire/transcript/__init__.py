"""The one transcript schema shared by every protocol (``schema``), and its files (``io``).

A transcript is a JSONL file: each invocation of a run appends a ``header`` line (the run spec), then events
keyed by ``session_id``, ``stage`` and ``turn``. The file is append-only and flushed after every line, so it can
be read while a run is in progress; a torn last line (a crash mid-write) is ignored on read. Resume works on this
file alone: a session that already has a ``verdict`` event is finished. Which of a session's attempts counts is
``counting_attempt``'s answer, for every reader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from voirdire.base import lazy_face

if TYPE_CHECKING:
    from voirdire.transcript.cache import CachedReply, ResponseCache, cacheable
    from voirdire.transcript.calls import CallTally
    from voirdire.transcript.frames import TABLES, CostOf, LoadedTranscript
    from voirdire.transcript.io import (
        MemoryWriter,
        TranscriptWriter,
        bounded_lines,
        drop_torn_tail,
        is_transcript,
        iter_records,
        load,
        load_outline,
        load_session,
        max_line_bytes,
        observers_of,
        observing,
        read_lines,
    )
    from voirdire.transcript.schema import (
        CALL_COUNT_MAX,
        SCHEMA_VERSION,
        DisplayHints,
        ErrorEvent,
        Event,
        Guarantee,
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
    from voirdire.transcript.sidecar import (
        MAX_COMMENT,
        MAX_NAME,
        READINGS,
        HumanLabel,
        LabelSample,
        SidecarError,
        append_label,
        clean_text,
        current_labels,
        read_sidecar,
        sidecar_path,
        why_not_writable,
    )
    from voirdire.transcript.step_views import (
        Card,
        Cell,
        Column,
        StepView,
        Tone,
        VerdictView,
        Views,
        card_of,
        complete,
        generic_card,
        lookup,
    )

# What runs: each name's module is imported at the name's first use (voirdire.base.faces).
__getattr__ = lazy_face(
    __name__,
    {
        "voirdire.transcript.cache": ("CachedReply", "ResponseCache", "cacheable"),
        "voirdire.transcript.calls": ("CallTally",),
        "voirdire.transcript.frames": ("TABLES", "CostOf", "LoadedTranscript"),
        "voirdire.transcript.io": (
            "MemoryWriter", "TranscriptWriter", "bounded_lines", "drop_torn_tail", "is_transcript", "iter_records",
            "load", "load_outline", "load_session", "max_line_bytes", "observers_of", "observing",
            "read_lines",
        ),
        "voirdire.transcript.schema": (
            "CALL_COUNT_MAX", "SCHEMA_VERSION", "DisplayHints", "ErrorEvent", "Event", "Guarantee", "Line", "Message",
            "ModelCall", "ParseFailure", "RoleBinding", "RunHeader", "SessionRecord", "SessionStart", "Step",
            "TokenUsage", "Transcript", "TranscriptError", "Transition", "Verdict", "_Event", "counting_attempt",
            "new_run_id", "reading_order", "utcnow",
        ),
        "voirdire.transcript.sidecar": (
            "MAX_COMMENT", "MAX_NAME", "READINGS", "HumanLabel", "LabelSample", "SidecarError", "append_label",
            "clean_text", "current_labels", "read_sidecar", "sidecar_path", "why_not_writable",
        ),
        "voirdire.transcript.step_views": (
            "Card", "Cell", "Column", "StepView", "Tone", "VerdictView", "Views", "card_of", "complete", "generic_card",
            "lookup",
        ),
    },
)

__all__ = [
    "CALL_COUNT_MAX",
    "MAX_COMMENT",
    "MAX_NAME",
    "READINGS",
    "SCHEMA_VERSION",
    "TABLES",
    "CachedReply",
    "CallTally",
    "Card",
    "Cell",
    "Column",
    "CostOf",
    "DisplayHints",
    "ErrorEvent",
    "Event",
    "Guarantee",
    "HumanLabel",
    "LabelSample",
    "Line",
    "LoadedTranscript",
    "MemoryWriter",
    "Message",
    "ModelCall",
    "ParseFailure",
    "ResponseCache",
    "RoleBinding",
    "RunHeader",
    "SessionRecord",
    "SessionStart",
    "SidecarError",
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
    "append_label",
    "bounded_lines",
    "cacheable",
    "card_of",
    "clean_text",
    "complete",
    "counting_attempt",
    "current_labels",
    "drop_torn_tail",
    "generic_card",
    "is_transcript",
    "iter_records",
    "load",
    "load_outline",
    "load_session",
    "lookup",
    "max_line_bytes",
    "new_run_id",
    "observers_of",
    "observing",
    "read_lines",
    "read_sidecar",
    "reading_order",
    "sidecar_path",
    "utcnow",
    "why_not_writable",
]
