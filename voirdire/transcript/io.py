"""Transcript files: the append-only writers, and the readers that rebuild sessions from the lines.

The file is append-only and flushed after every line, so it can be read while a run is in progress; a torn last
line (a crash mid-write) is ignored on read. Resume works on this file alone: a session that already has a
``verdict`` event is finished. Each line is parsed and validated against ``voirdire.transcript.schema`` in
``_parse_line``, the one door by which a record enters a reader.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import ValidationError

from voirdire.base import (
    MAX_JSON_DEPTH,
    append_all as _write_all,  # a module name, so a test can make one write fail
    cannot_write,
    cut_torn_tail as _cut_torn_tail,
    max_reply_chars,
    too_deep,
)
from voirdire.transcript.schema import (
    _LINE,
    RunHeader,
    SessionRecord,
    SessionStart,
    Transcript,
    TranscriptError,
    Verdict,
    _Event,
    counting_attempt,
    repeat_of,
)


class MemoryWriter:
    """A transcript kept in memory (``records``), or only counted (``keep=False``): for batch experiments that run
    the protocol's own code over many thousands of sessions and need the verdicts, not a file."""

    def __init__(self, keep: bool = True) -> None:
        self.keep = keep
        self.records: list[RunHeader | _Event] = []
        self.count = 0

    def write(self, record: RunHeader | _Event) -> None:
        self.count += 1
        if self.keep:
            self.records.append(record)

    def close(self) -> None:
        return None

    def __enter__(self) -> MemoryWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# Observers of the records written to a transcript path in this process (``observing``): path -> callbacks.
_OBSERVERS: dict[Path, list[Callable[[Any], None]]] = {}


@contextmanager
def observing(path: str | Path, observer: Callable[[Any], None]) -> Iterator[None]:
    """While inside, every record a writer of this process appends to ``path`` is also passed to ``observer``, as
    the object written (not parsed back): the end-of-run report is folded as the run goes. A line written as text
    (``write_line``: a worker's or a Ray actor's records, serialised elsewhere) is passed as ``None``, so the
    observer knows it missed one. An observer must not raise: a writer does not catch what it raises."""
    key = Path(path).resolve()
    _OBSERVERS.setdefault(key, []).append(observer)
    try:
        yield
    finally:
        _OBSERVERS[key].remove(observer)
        if not _OBSERVERS[key]:
            del _OBSERVERS[key]


def observers_of(path: str | Path) -> tuple[Callable[[Any], None], ...]:
    """The observers of ``path`` in this process (in a forked worker, its copies of the run's process's)."""
    return tuple(_OBSERVERS.get(Path(path).resolve(), ())) if _OBSERVERS else ()


class TranscriptWriter:
    """Append-only JSONL writer: one ``os.write`` of one complete line per record, on a file opened ``O_APPEND``.

    Within a process, writes happen on the event loop's thread, so concurrent sessions never interleave within a
    line. ``shared=True`` is for several processes appending to one transcript (``--workers``): each line is
    written under an exclusive ``flock`` of the file, and before writing, a torn line that a writer killed mid-write
    left at the end (a fatal signal can cut a write short between pages) is cut off, so the next record starts on a
    line of its own and the file stays readable. A shared writer does not cut a torn tail when it opens the file:
    the other writers may be mid-line, and the process that opened the file first already did. Not for a file under
    a run's lock: the run holds the file's own ``flock`` (``voirdire.runner.lock``), which a shared writer's would
    wait for; a run writes its transcript from its one process (``voirdire.executors``).
    """

    def __init__(self, path: str | Path, *, shared: bool = False):
        self.path = Path(path)
        self.shared = shared
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists() and not shared:
            drop_torn_tail(self.path)
        # Read access too when shared: the tail check reads the last byte (pread) under the lock.
        flags = (os.O_RDWR if shared else os.O_WRONLY) | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
        self._fd: int | None = os.open(self.path, flags, 0o666)
        self._observers = _OBSERVERS.get(self.path.resolve()) if _OBSERVERS else None

    def write(self, record: RunHeader | _Event) -> None:
        self.append(record.model_dump_json(exclude_none=False), record)

    def write_line(self, line: str, folded: Any = None) -> None:
        """One record (or several lines) already serialised as JSON; observers are given ``folded``, what the lines
        fold to where they were made (a worker's session), else told they missed them (None)."""
        self.append(line, folded)

    def append(self, line: str, record: Any) -> None:
        """``line`` appended; ``record`` (the object it serialises, or None) passed to the path's observers."""
        self._append(line)
        if self._observers:
            for observe in self._observers:
                observe(record)

    def _append(self, line: str) -> None:
        if self._fd is None:
            raise ValueError(f"{self.path}: transcript writer is closed")
        data = (line + "\n").encode("utf-8")
        try:
            if not self.shared:
                _write_all(self._fd, data)
                return
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            try:
                _cut_torn_tail(self._fd)
                _write_all(self._fd, data)
            finally:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
        except OSError as exc:  # a full disk: one error naming the file (a half line is cut when it is reopened)
            raise cannot_write(exc, self.path, "transcript") from None

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def __enter__(self) -> TranscriptWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def drop_torn_tail(path: Path) -> None:
    """Cut a half-written last line (a crash mid-write) so appended records start on a line of their own; the
    file is read backwards from its end in pieces, never whole."""
    fd = os.open(path, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
    try:
        _cut_torn_tail(fd)
    finally:
        os.close(fd)


MAX_LINE_BYTES_ENV = "VOIRDIRE_MAX_LINE_BYTES"
LINE_BYTES_FLOOR = 16 << 20


def max_line_bytes() -> int:
    """The longest transcript line a reader takes in, in bytes: ``VOIRDIRE_MAX_LINE_BYTES``, else 16 MiB or 64
    bytes per character of ``VOIRDIRE_MAX_REPLY_CHARS``, whichever is more (16 MiB: some 27 copies of a reply of
    the default 100,000 characters, each escaped to 6 bytes a character). voirdire writes no longer line (a reply
    is cut at that many characters before it is kept, and a line holds a few copies of one at most, JSON-escaped),
    so a longer one is a damaged or foreign file: readers skip it without holding it, so that one 300 MB line
    costs the memory of the cap, not of the line."""
    raw = os.environ.get(MAX_LINE_BYTES_ENV, "").strip()
    if raw.isdigit() and int(raw) >= 1024:
        return int(raw)
    return max(LINE_BYTES_FLOOR, 64 * max_reply_chars())


def bounded_lines(fh: BinaryIO, cap: int) -> Iterator[bytes | int]:
    """Each line of a binary file from where it stands, newline included; a line longer than ``cap`` bytes is
    read past in pieces, never held, and given as its length (an ``int``) instead. A last line without a newline
    is given as it is (up to ``cap`` bytes) or, when longer, as its length."""
    while True:
        raw = fh.readline(cap + 1)
        if not raw:
            return
        if len(raw) <= cap or raw.endswith(b"\n"):
            yield raw
            continue
        length = len(raw)
        while True:
            piece = fh.readline(1 << 16)
            length += len(piece)
            if not piece or piece.endswith(b"\n"):
                break
        yield length


def read_lines(path: str | Path) -> Iterator[RunHeader | _Event]:
    """Parse every record; a torn *last* line is skipped, any other bad line raises naming file:line.

    The file is read line by line, never whole, so reading a transcript takes the memory of one line; a line is
    parsed once the next non-blank one is seen (or the end), so that only the last can be taken for torn. Lines are
    decoded one by one, so a crash in the middle of a multi-byte character only tears the last line.
    """
    path = Path(path)
    if not path.exists():
        raise TranscriptError(f"{path}: no such transcript")
    if path.is_dir():
        raise TranscriptError(f"{path}: is a folder, not a transcript file")
    cap = max_line_bytes()
    with path.open("rb") as fh:
        pending: tuple[int, bytes] | None = None  # the last non-blank line seen, not parsed yet
        for i, raw in enumerate(bounded_lines(fh, cap)):
            if isinstance(raw, int):  # past the cap: read past, never held
                if pending is not None:
                    yield _parse_line(path, *pending, last=False)
                raise TranscriptError(
                    f"{path}:{i + 1}: not a transcript record (a line of {raw:,} bytes, more than the {cap:,} a "
                    f"reader takes in: {MAX_LINE_BYTES_ENV})"
                )
            if not raw.strip():
                continue
            if pending is not None:
                yield _parse_line(path, *pending, last=False)
            pending = (i, raw)
        if pending is not None:
            record = _parse_line(path, *pending, last=True)
            if record is not None:
                yield record


iter_records = read_lines
"""The records of a transcript file, one at a time, as ``read_lines`` reads them (the name reports use)."""


def _parse_line(path: Path, i: int, raw: bytes, *, last: bool) -> Any:
    if too_deep(raw):
        raise TranscriptError(
            f"{path}:{i + 1}: not a transcript record (JSON nested more than {MAX_JSON_DEPTH} levels deep)"
        )
    # Parsed and validated in one step (pydantic-core's JSON), twice as fast as json.loads then validation; where it
    # refuses a line, the two steps below give what they always gave: the record, a torn tail's None, or why not.
    with contextlib.suppress(ValidationError):
        return _LINE.validate_json(raw)
    try:
        return _LINE.validate_python(json.loads(raw.decode("utf-8")))
    except (UnicodeDecodeError, json.JSONDecodeError, ValidationError) as exc:
        if last and not isinstance(exc, ValidationError) and raw.lstrip().startswith(b"{"):
            return None  # a record torn at the end of a file still being written, or crashed mid-line
        raise TranscriptError(f"{path}:{i + 1}: not a transcript record ({_why(exc)})") from None


_GROUPED = re.compile(r"(?<![\d.,])\d{5,}(?![\d.,])")
"""A long whole number in pydantic's words, grouped by thousands so a reader can count its digits."""


def _why(exc: Exception) -> str:
    """What is wrong with a line, in one phrase (no pydantic dump)."""
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    if isinstance(exc, json.JSONDecodeError):
        return f"not JSON: {exc.msg}"
    if isinstance(exc, ValidationError):
        first = exc.errors(include_url=False)[0]
        if first["type"] == "union_tag_not_found":  # pydantic's words name its discriminator, not the problem
            return "no 'kind' field, which every transcript line has: is it a dataset or another JSONL file?"
        if first["type"] == "union_tag_invalid":
            given = first["input"].get("kind") if isinstance(first["input"], dict) else None
            return f"unknown record kind {given!r}"
        if first["type"] == "model_attributes_type" or (not first["loc"] and first["type"] == "dict_type"):
            return "not a JSON object"
        where = ".".join(str(p) for p in first["loc"])
        said = _GROUPED.sub(lambda m: f"{int(m.group()):,}", str(first["msg"]))  # 1000000000 -> 1,000,000,000
        return f"{where}: {said}" if where else said
    return str(exc)


def load(path: str | Path) -> Transcript:
    """Rebuild sessions from a transcript file.

    A session may have been attempted by several runs (resume after a crash); the attempt that reached a verdict
    wins, else the latest attempt, so events of an abandoned attempt never mix with a finished one.
    """
    return _assemble(path, read_lines(path))


def load_session(path: str | Path, session_id: str) -> Transcript:
    """The transcript with one session only (``load``'s attempt of it), read without holding the others: what a
    command shows of one session of a long run."""
    return _assemble(path, (r for r in read_lines(path) if isinstance(r, RunHeader) or r.session_id == session_id))


def load_outline(path: str | Path) -> Transcript:
    """``load`` with each session's start and verdict only (which attempt counts, its item, its verdict): what a
    resumed run needs to know of the sessions already run, in memory that does not grow with their events."""
    return _assemble(path, (r for r in read_lines(path) if isinstance(r, RunHeader | SessionStart | Verdict)))


def _assemble(path: str | Path, records: Iterable[RunHeader | _Event]) -> Transcript:
    headers: list[RunHeader] = []
    attempts: dict[str, dict[str, list[_Event]]] = {}
    for rec in records:
        if isinstance(rec, RunHeader):
            headers.append(rec)
        else:
            attempts.setdefault(rec.session_id, {}).setdefault(rec.run_id, []).append(rec)
    sessions: dict[str, SessionRecord] = {}
    for sid, by_run in attempts.items():
        chosen = counting_attempt(by_run.items(), lambda attempt: any(isinstance(e, Verdict) for e in attempt[1]))
        assert chosen is not None  # every session here has at least one attempt
        run_id, events = chosen[0], sorted(chosen[1], key=lambda e: e.seq)
        start = next((e for e in events if isinstance(e, SessionStart)), None)
        sessions[sid] = SessionRecord(
            session_id=sid,
            run_id=run_id,
            item_id=start.item_id if start else None,
            item=start.item if start else {},
            events=events,
            repeat=repeat_of(start, events),
        )
    return Transcript(path=str(path), headers=headers, sessions=sessions)


def is_transcript(path: Path) -> bool:
    """A file whose first line is a voirdire run header (datasets beside transcripts are skipped)."""
    try:
        with path.open("rb") as fh:
            first = fh.readline(1 << 20)
    except OSError:
        return False
    if not first.lstrip().startswith(b"{"):
        return False
    if too_deep(first):  # json.loads would exhaust its recursion on it: not a run header anyway
        return False
    try:
        return json.loads(first).get("kind") == "header"
    except (ValueError, AttributeError):
        return False
