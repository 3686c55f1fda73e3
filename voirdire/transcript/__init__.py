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
    from voirdire.transcript.cache import (
        CachedReply as CachedReply,
        ResponseCache as ResponseCache,
        cacheable as cacheable,
    )
    from voirdire.transcript.calls import CallTally as CallTally
    from voirdire.transcript.frames import TABLES as TABLES, CostOf as CostOf, LoadedTranscript as LoadedTranscript
    from voirdire.transcript.io import (
        MemoryWriter as MemoryWriter,
        TranscriptWriter as TranscriptWriter,
        bounded_lines as bounded_lines,
        drop_torn_tail as drop_torn_tail,
        is_transcript as is_transcript,
        iter_records as iter_records,
        load as load,
        load_outline as load_outline,
        load_session as load_session,
        max_line_bytes as max_line_bytes,
        observers_of as observers_of,
        observing as observing,
        read_lines as read_lines,
    )
    from voirdire.transcript.schema import (
        CALL_COUNT_MAX as CALL_COUNT_MAX,
        REPEAT_STEP as REPEAT_STEP,
        SCHEMA_VERSION as SCHEMA_VERSION,
        DisplayHints as DisplayHints,
        ErrorEvent as ErrorEvent,
        Event as Event,
        Guarantee as Guarantee,
        Line as Line,
        Message as Message,
        ModelCall as ModelCall,
        ParseFailure as ParseFailure,
        RoleBinding as RoleBinding,
        RunHeader as RunHeader,
        SessionRecord as SessionRecord,
        SessionStart as SessionStart,
        Step as Step,
        TokenUsage as TokenUsage,
        Transcript as Transcript,
        TranscriptError as TranscriptError,
        Transition as Transition,
        Verdict as Verdict,
        _Event as _Event,
        counting_attempt as counting_attempt,
        new_run_id as new_run_id,
        reading_order as reading_order,
        repeat_of as repeat_of,
        utcnow as utcnow,
    )
    from voirdire.transcript.sidecar import (
        MAX_COMMENT as MAX_COMMENT,
        MAX_NAME as MAX_NAME,
        READINGS as READINGS,
        HumanLabel as HumanLabel,
        LabelSample as LabelSample,
        SidecarError as SidecarError,
        append_label as append_label,
        clean_text as clean_text,
        current_labels as current_labels,
        read_sidecar as read_sidecar,
        sidecar_path as sidecar_path,
        why_not_writable as why_not_writable,
    )
    from voirdire.transcript.step_views import (
        Card as Card,
        Cell as Cell,
        Column as Column,
        StepView as StepView,
        Tone as Tone,
        VerdictView as VerdictView,
        Views as Views,
        card_of as card_of,
        complete as complete,
        generic_card as generic_card,
        lookup as lookup,
    )

# Every name re-exported above (`X as X`) is exported, imported at its first use (voirdire.base.faces).
__getattr__, __dir__, __all__ = lazy_face(__name__)
