"""A byte-offset index of a transcript, so a viewer never parses a whole file to show one session.

A transcript is append-only JSONL in which the lines of concurrent sessions interleave. The index records, per
session attempt, the byte spans of its lines and a summary (status, verdict, counts, tokens, gold correctness), and
the offsets of the run headers. It is built once by one pass over the file, kept beside the transcript
(``.<name>.index``, or in the user's cache folder when that folder is read-only), and brought up to date by reading
only the bytes appended since: the index remembers the size it covered and a digest of the bytes before that point,
so a rewritten or truncated transcript is indexed afresh. A half-written last line is left for the next refresh.

Which attempt of a session counts follows ``voirdire.transcript.load``: the last attempt that reached a verdict,
else the latest. Gold correctness (does the verdict agree with the gold label?) comes from the verdict's statistics,
under the key the run header's display hints name (``views.verdict.gold``), or, where the protocol's report lists
rows with ``id`` and ``gold``, from comparing ``accepted`` with that gold; the report is found through the registry,
never by importing a protocol. Per model, an attempt keeps its calls, tokens, model time and what was billed
(tokens of calls not answered from the cache, requests), which ``voirdire.reports.prices.run_cost`` prices.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError

from voirdire.base import MAX_JSON_DEPTH, VoirdireError, token_count, too_deep
from voirdire.reports import agrees_with_gold, gold_labels
from voirdire.transcript import (
    CALL_COUNT_MAX,
    CallTally,
    Line,
    RunHeader,
    SessionRecord,
    SessionStart,
    Transcript,
    Verdict,
    bounded_lines,
    counting_attempt,
    max_line_bytes,
)
from voirdire.web.errors import ViewerError

try:  # a faster JSON parser when installed
    from orjson import loads as _json_loads
except ImportError:  # pragma: no cover
    _json_loads = json.loads

INDEX_VERSION = 3  # 3: each model's calls as a CallTally
_LINE: TypeAdapter[Any] = TypeAdapter(Line)
_TAIL = 4096  # bytes before the indexed end whose digest proves the file was only appended to
_UNSEARCHED = frozenset({"run_id", "session_id", "time", "kind", "request_digest", "seq"})


T = TypeVar("T")


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
        models = {model: tally.row() for model, tally in self.models.items()}
        return [spans if name == "spans" else models if name == "models" else getattr(self, name) for name in _FIELDS]


@dataclass
class HeaderRef:
    run_id: str
    offset: int
    length: int


def _title(item: dict[str, Any], fields_hint: Iterable[str]) -> str:
    for key in [*fields_hint, *item]:
        value = item.get(key)
        if key != "id" and isinstance(value, str) and value.strip():
            text = " ".join(value.split())
            return text[:157] + "…" if len(text) > 160 else text
    return ""


def _strings(value: Any, key: str = "") -> Iterator[str]:
    """The searchable text of a record: every string value, keys and bookkeeping fields left out."""
    if key in _UNSEARCHED:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


_ATTEMPT = TypeAdapter(Attempt)
_SPANS = re.compile(r"(?:\d{1,15},\d{1,15}(?:;|$))*")


class _Stored(BaseModel):
    """What an index file must hold to be used (its version and path are checked before)."""

    size: int
    lines: int
    mtime_ns: int
    tail: str
    hints: list[str] = []
    gold: str = ""
    headers: list[tuple[str, int, int]]
    problems: list[str] = []
    attempts: list[list[Any]]


def default_store(path: Path) -> Path:
    return path.with_name(f".{path.name}.index")


def cache_store(path: Path) -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "voirdire" / "view"
    return base / (hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:24] + ".index")


class TranscriptIndex:
    """The index of one transcript file; ``refresh`` brings it up to date with the file."""

    def __init__(self, path: str | Path, *, store: Path | None = None, persist: bool = True) -> None:
        self.path = Path(path)
        self.store = store or default_store(self.path)
        self.persist = persist
        self.size = 0  # bytes indexed (whole lines only)
        self.lines = 0
        self.mtime_ns = 0
        self.headers: list[HeaderRef] = []
        self.attempts: dict[str, dict[str, Attempt]] = {}  # sid -> rid -> attempt, both in order of appearance
        self.problems: list[str] = []
        self._tail_digest = ""
        self._hints: tuple[str, ...] = ()
        self._gold = ""  # the verdict statistic that says whether it agrees with gold (display hints)
        self._header_cache: dict[str, RunHeader] = {}
        self._lock = threading.RLock()
        self._loaded = False
        self._rebuilt = True  # False while the spans come from an index file (anyone could have edited it)
        # The counting attempts in order, and each session's place in it: built once after the file changed, so a
        # session page's previous/next links and the run list cost the same at 50,000 sessions as at 10.
        self._order: list[Attempt] | None = None
        self._position: dict[str, int] = {}
        self._derived: dict[str, Any] = {}  # what pages compute from the whole order (``derived``), as long as it holds

    # ------------------------------------------------------------------ keeping up with the file
    def refresh(self) -> bool:
        """Index what was appended since the last call; re-index a file that was rewritten. True if it changed."""
        with self._lock:
            if not self._loaded:
                self._loaded = True
                self._load()
            try:
                st = self.path.stat()
            except OSError as exc:
                raise ViewerError(f"{self.path}: {exc.strerror or exc}") from None
            if st.st_size == self.size and st.st_mtime_ns == self.mtime_ns:
                return False
            if st.st_size < self.size or not self._appended_only():
                self._reset()
                self._rebuilt = True
            changed = self._scan(st.st_size)
            self.mtime_ns = st.st_mtime_ns
            if changed:
                self._save()
            return changed

    def _reset(self) -> None:
        self._order = None
        self.size = self.lines = 0
        self.headers, self.attempts, self.problems = [], {}, []
        self._tail_digest = ""
        self._header_cache = {}

    def _tail(self, fh: Any, end: int) -> str:
        start = max(0, end - _TAIL)
        fh.seek(start)
        return hashlib.sha256(fh.read(end - start)).hexdigest()

    def _appended_only(self) -> bool:
        if self.size == 0:
            return True
        with self.path.open("rb") as fh:
            return self._tail(fh, self.size) == self._tail_digest

    def _scan(self, size: int) -> bool:
        """Index the whole lines from ``self.size`` on, one at a time: a line longer than the reading cap
        (``voirdire.transcript.max_line_bytes``) is read past, never held, and named among the problems."""
        cap = max_line_bytes()
        self._order = None  # the lines read here may add sessions or settle which attempt counts
        with self.path.open("rb") as fh:
            fh.seek(self.size)
            pos = self.size
            finished: list[tuple[Attempt, dict[str, Any]]] = []
            self._starts: dict[tuple[str, str], bytes] = {}  # this batch's session_start lines, for the report
            for raw in bounded_lines(fh, cap):
                length = raw if isinstance(raw, int) else len(raw)
                if pos + length > size:  # written since the size was taken: the next refresh reads it
                    break
                if isinstance(raw, bytes) and not raw.endswith(b"\n"):
                    break  # a half-written last line waits for the next refresh
                if isinstance(raw, int):
                    fh.seek(pos + length - 1)
                    if fh.read(1) != b"\n":  # still being written
                        break
                    self.lines += 1
                    self.problems.append(
                        f"{self.path}:{self.lines}: a line of {length:,} bytes, more than the {cap:,} the viewer "
                        "reads: left out"
                    )
                else:
                    self.lines += 1
                    if length > 1:
                        self._line(raw[:-1], pos, length, finished)
                pos += length
            if pos == self.size:
                return False
            self.size = pos
            self._tail_digest = self._tail(fh, self.size)
        self._check_gold(finished)
        self._starts = {}
        return True

    def _line(self, raw: bytes, offset: int, length: int, finished: list[tuple[Attempt, dict[str, Any]]]) -> None:
        try:
            if too_deep(raw):
                raise ValueError(f"JSON nested more than {MAX_JSON_DEPTH} levels")
            rec = _record(raw)
            kind = rec["kind"]
            if kind == "header":
                self.headers.append(HeaderRef(rec["run_id"], offset, length))
                display = rec.get("display") or {}
                self._hints = tuple(display.get("item_fields", ()))
                self._gold = str(((display.get("views") or {}).get("verdict") or {}).get("gold") or "")
                return
            sid, rid = str(rec["session_id"]), str(rec["run_id"])
        except (ValueError, KeyError, TypeError) as exc:
            why = str(exc) if "nested" in str(exc) else type(exc).__name__
            self.problems.append(f"{self.path}:{self.lines}: not a transcript record ({why})")
            return
        a = self.attempts.setdefault(sid, {}).get(rid)
        if a is None:
            a = self.attempts[sid][rid] = Attempt(sid=sid, rid=rid)
        a.add_span(offset, length)
        a.events += 1
        a.first = a.first or rec.get("time")
        a.last = rec.get("time")
        if kind == "session_start":
            a.start = [offset, length]
            self._starts[a.sid, a.rid] = raw
            a.item_id = rec.get("item_id")
            a.title = _title(rec.get("item") or {}, self._hints)
        elif kind == "message":
            a.messages += 1
        elif kind == "model_call":
            usage = rec.get("usage") or {}
            p, c = token_count(usage.get("prompt_tokens", 0)), token_count(usage.get("completion_tokens", 0))
            t = rec["latency_s"]
            if p is None or c is None or not isinstance(t, int | float):  # a forged or garbled line: not counted
                self.problems.append(f"{self.path}:{self.lines}: usage counts that are not token counts")
                return
            retries, requests = _call_count(rec.get("retries", 0)), _call_count(rec.get("requests", 1))
            if retries is None or requests is None:
                self.problems.append(
                    f"{self.path}:{self.lines}: request or retry counts that are not whole numbers from 0 to "
                    f"{CALL_COUNT_MAX:,}"
                )
                return
            a.calls += 1
            a.prompt_tokens += p
            a.completion_tokens += c
            a.latency_s += t
            a.retries += retries
            tally = a.models.get(rec["model"])
            if tally is None:
                tally = a.models[rec["model"]] = CallTally()
            cached, coalesced = bool(rec.get("cached")), bool(rec.get("coalesced"))
            tally.count(p, c, requests=requests, cached=cached, coalesced=coalesced, latency_s=t)
            a.human = a.human or rec["model"] == "human"
        elif kind == "parse_failure":
            a.parse_failures += 1
        elif kind == "error":
            a.errors += 1
            a.error = f"{rec.get('error_type')}: {rec.get('message')}"
            a.retries += _call_count(rec.get("retries") or 0) or 0  # the retries of a call given up on
        elif kind == "transition":
            a.state = rec.get("to_state")
        elif kind == "verdict":
            a.decision = str(rec["decision"])
            a.accepted = rec.get("accepted")
            stats = rec.get("statistics")
            a.correct = agrees_with_gold(stats if isinstance(stats, dict) else {}, self._gold)
            a.gold_checked = a.correct is not None
            if not a.gold_checked:
                finished.append((a, rec))

    def _check_gold(self, finished: list[tuple[Attempt, dict[str, Any]]]) -> None:
        """Gold correctness from the protocol's report rows (``id``, ``gold``), for verdicts that do not say."""
        header = self.header()
        if not finished or header is None:
            return
        try:
            from voirdire.registry import registrations

            reg = registrations().get(header.protocol)
        except VoirdireError:
            reg = None
        sessions = {}
        for a, verdict in finished:
            a.gold_checked = True
            start = self._starts.get((a.sid, a.rid)) or (self._read_line(a.start) if a.start else None)
            if reg is None or start is None:
                continue
            try:
                events = [SessionStart.model_validate_json(start), Verdict.model_validate(verdict)]
            except ValidationError:
                continue
            sessions[a.sid] = SessionRecord(
                session_id=a.sid, run_id=a.rid, item_id=a.item_id, item=events[0].item, events=events
            )
        if not sessions or reg is None:
            return
        transcript = Transcript(path=str(self.path), headers=[header], sessions=sessions)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rows = getattr(reg.fold(transcript, ci=0), "rows", None)  # the rows only: no intervals to compute
        except Exception:  # a report that cannot read a partial transcript knows no gold here
            return
        labels = gold_labels(rows)
        for a, _ in finished:
            if a.item_id is not None:
                a.correct = agrees_with_gold({}, accepted=a.accepted, label=labels.get(a.item_id))

    # ------------------------------------------------------------------ persistence
    def _load(self) -> None:
        if not self.persist:
            return
        for store in (self.store, cache_store(self.path)):
            try:
                data = json.loads(store.read_text(encoding="utf-8"))
            except (OSError, ValueError, RecursionError):
                continue
            if not isinstance(data, dict) or data.get("version") != INDEX_VERSION:
                continue
            if data.get("path") != str(self.path.resolve()):
                continue
            try:  # an index file is a cache anyone could have edited: one that does not check out is rebuilt
                self._restore(_Stored.model_validate(data))
            except (ValueError, TypeError, KeyError):
                self._reset()
                continue
            self.store = store
            self._rebuilt = False  # its spans are checked against the file as they are read
            return

    def _restore(self, data: _Stored) -> None:
        self.size, self.lines, self.mtime_ns = data.size, data.lines, data.mtime_ns
        self._tail_digest = data.tail
        self._hints = tuple(data.hints)
        self._gold = data.gold
        self.headers = [HeaderRef(*h) for h in data.headers]
        self.problems = list(data.problems)
        self._order = None
        self.attempts = {}
        for row in data.attempts:
            values = dict(zip(_FIELDS, row, strict=True))
            values["models"] = {str(model): CallTally.from_row(r) for model, r in dict(values["models"]).items()}
            a = _ATTEMPT.validate_python(values)
            if isinstance(a.spans, str) and not _SPANS.fullmatch(a.spans):
                raise ValueError("spans")
            self.attempts.setdefault(a.sid, {})[a.rid] = a

    def _save(self) -> None:
        if not self.persist:
            return
        data = {
            "version": INDEX_VERSION,
            "path": str(self.path.resolve()),
            "size": self.size,
            "lines": self.lines,
            "mtime_ns": self.mtime_ns,
            "tail": self._tail_digest,
            "hints": list(self._hints),
            "gold": self._gold,
            "headers": [[h.run_id, h.offset, h.length] for h in self.headers],
            "problems": self.problems[-20:],
            "attempts": [a.row() for by_run in self.attempts.values() for a in by_run.values()],
        }
        text = json.dumps(data, separators=(",", ":"))
        for store in dict.fromkeys((self.store, default_store(self.path), cache_store(self.path))):
            if _write_atomically(store, text):
                self.store = store
                return

    # ------------------------------------------------------------------ reading
    def _read_line(self, span: list[int]) -> bytes | None:
        with self.path.open("rb") as fh:
            fh.seek(span[0])
            return fh.read(min(span[1], max_line_bytes())) or None

    def _read_spans(self, spans: list[list[int]]) -> bytes:
        """The lines of ``spans``, each at most the reading cap long (a longer one, which only a forged index
        points at, is left out unread)."""
        cap = max_line_bytes()
        parts = []
        with self.path.open("rb") as fh:
            for offset, length in spans:
                fh.seek(offset)
                left = length
                for raw in bounded_lines(fh, cap):
                    size = raw if isinstance(raw, int) else len(raw)
                    if isinstance(raw, bytes) and size <= left:
                        parts.append(raw)
                    left -= size
                    if left <= 0:
                        break
        return b"".join(parts)

    def header(self, run_id: str | None = None) -> RunHeader | None:
        """The header of ``run_id`` (the last one if None or unknown)."""
        with self._lock:
            ref = next((h for h in reversed(self.headers) if h.run_id == run_id), None) if run_id else None
            ref = ref or (self.headers[-1] if self.headers else None)
            if ref is None:
                return None
            if ref.run_id not in self._header_cache:
                raw = self._checked_line(ref) if not self._rebuilt else self._read_line([ref.offset, ref.length])
                if raw is None:  # the index does not agree with the file: rebuilt, then asked again
                    self._rebuild()
                    return self.header(run_id)
                self._header_cache[ref.run_id] = self._readable_header(raw or b"")
            return self._header_cache[ref.run_id]

    def _checked_line(self, ref: HeaderRef) -> bytes | None:
        """The header line ``ref`` points at, or None when it is no whole header line of that run (a forged or
        stale index)."""
        if not self._whole_lines([[ref.offset, ref.length]]):
            return None
        raw = self._read_line([ref.offset, ref.length]) or b""
        try:
            rec = _loads(raw)
        except RecursionError:
            return None
        if not isinstance(rec, dict) or rec.get("kind") != "header" or str(rec.get("run_id")) != ref.run_id:
            return None
        return raw

    def _readable_header(self, raw: bytes) -> RunHeader:
        """A run header; one with fields this voirdire does not know (written by a newer one) is read without
        them, and the fields are named among the run's problems."""
        try:
            return RunHeader.model_validate_json(raw)
        except ValidationError as exc:
            errors = exc.errors()
        data = _loads(raw)
        unknown = [e["loc"] for e in errors if e["type"] == "extra_forbidden"]
        if not isinstance(data, dict) or len(unknown) != len(errors):
            raise ViewerError(f"{self.path}: unreadable run header: {errors[0]['msg']}")
        for loc in unknown:
            _drop(data, loc)
        try:
            header = RunHeader.model_validate(data)
        except ValidationError as exc:
            raise ViewerError(f"{self.path}: unreadable run header: {exc.errors()[0]['msg']}") from None
        names = ", ".join(".".join(str(part) for part in loc) for loc in unknown)
        note = (
            f"{self.path}: the run header of {header.run_id} has fields this voirdire does not know ({names}; "
            "written by a newer version?): shown without them"
        )
        if note not in self.problems:
            self.problems.append(note)
        return header

    def _whole_lines(self, spans: list[list[int]]) -> bool:
        """Whether each span lies inside the indexed bytes and covers whole lines (starts after a newline or at
        0, ends with one)."""
        try:
            with self.path.open("rb") as fh:
                for offset, length in spans:
                    if offset < 0 or length < 1 or offset + length > self.size:
                        return False
                    fh.seek(max(0, offset - 1))
                    before = fh.read(1) if offset else b"\n"
                    fh.seek(offset + length - 1)
                    if before != b"\n" or fh.read(1) != b"\n":
                        return False
        except OSError:
            return False
        return True

    def _rebuild(self) -> None:
        """Index the file afresh: the index (loaded from a file anyone could have edited) disagrees with it."""
        with self._lock:
            self._rebuilt = True
            self._reset()
            try:
                size = self.path.stat().st_size
            except OSError as exc:
                raise ViewerError(f"{self.path}: {exc.strerror or exc}") from None
            self._scan(size)
            self._save()

    def sessions(self) -> list[Attempt]:
        """The attempt that counts for each session, in order of first appearance."""
        with self._lock:
            return list(self._counting())

    def neighbours(self, sid: str) -> tuple[str | None, str | None]:
        """The sessions before and after ``sid`` in ``sessions()`` order (None at either end, or for no session)."""
        with self._lock:
            order = self._counting()
            at = self._position.get(sid)
            if at is None:
                return None, None
            return (order[at - 1].sid if at > 0 else None), (order[at + 1].sid if at + 1 < len(order) else None)

    def derived(self, name: str, compute: Callable[[TranscriptIndex], T]) -> T:
        """``compute(self)``, kept until the file changes: what a page reads of the whole run (a session page's
        verdict set) is computed once, not on every request."""
        with self._lock:
            self._counting()
            if name not in self._derived:
                self._derived[name] = compute(self)
            return self._derived[name]  # type: ignore[no-any-return]

    def _counting(self) -> list[Attempt]:
        if self._order is None:
            self._derived = {}
            out = []
            for by_run in self.attempts.values():
                counting = counting_attempt(by_run.values(), lambda a: a.decision is not None)
                if counting is not None:
                    out.append(counting)
            self._order = out
            self._position = {a.sid: i for i, a in enumerate(out)}
        return self._order

    def session(self, sid: str) -> Attempt | None:
        with self._lock:
            by_run = self.attempts.get(sid)
            if not by_run:
                return None
            return counting_attempt(by_run.values(), lambda a: a.decision is not None)

    def record(self, sid: str) -> SessionRecord | None:
        """One session's events, read from its byte spans alone."""
        a = self.session(sid)
        if a is None:
            return None
        events = self._events(a)
        if events is None:  # the index does not agree with the file: rebuilt, then read again
            self._rebuild()
            a = self.session(sid)
            if a is None:
                return None
            events = self._events(a) or []
        events.sort(key=lambda e: e.seq)
        start = next((e for e in events if isinstance(e, SessionStart)), None)
        return SessionRecord(
            session_id=sid,
            run_id=a.rid,
            item_id=start.item_id if start else None,
            item=start.item if start else {},
            events=events,
        )

    def _events(self, a: Attempt) -> list[Any] | None:
        """The attempt's events read from its spans; None when the spans are not whole lines of that session (a
        forged or stale index). A line that is not a readable record is left out and named among the problems,
        as the scan names it."""
        spans = a.span_list()
        if not self._rebuilt and not self._whole_lines(spans):
            return None
        events = []
        for raw in self._read_spans(spans).splitlines():
            if not raw.strip():
                continue
            rec = _loads(raw) if not too_deep(raw) else None
            if isinstance(rec, dict) and (str(rec.get("session_id")), str(rec.get("run_id"))) != (a.sid, a.rid):
                if self._rebuilt:
                    continue
                return None
            try:
                events.append(_LINE.validate_json(raw))
            except ValidationError as exc:
                why = exc.errors()[0]["msg"]
                note = f"{self.path}: session {a.sid!r}: a line that is not a transcript record left out ({why})"
                if note not in self.problems:
                    self.problems.append(note)
        return events

    def search(self, query: str, among: Iterable[Attempt]) -> list[Attempt]:
        """Sessions whose chat holds every word of ``query`` (case-insensitive, in any string value of its
        records: messages, replies, items, steps, verdicts, errors)."""
        terms = [t.casefold() for t in query.split()]
        if not terms:
            return list(among)
        needles = [json.dumps(t, ensure_ascii=False)[1:-1].encode().lower() for t in terms]
        return [a for a in among if self._matches(a, terms, needles)]

    def _matches(self, a: Attempt, terms: list[str], needles: list[bytes]) -> bool:
        blob = self._read_spans(a.span_list())
        lowered = blob.lower()
        return all(self._holds(blob, lowered, t, n) for t, n in zip(terms, needles, strict=True))

    @staticmethod
    def _holds(blob: bytes, lowered: bytes, term: str, needle: bytes) -> bool:
        """A quick byte search, confirmed on the parsed line (a hit in a key or an id does not count)."""
        pos = lowered.find(needle) if needle else -1
        while pos >= 0:
            start = blob.rfind(b"\n", 0, pos) + 1
            end = blob.find(b"\n", pos)
            end = len(blob) if end < 0 else end
            try:
                record = json.loads(blob[start:end])
            except ValueError:
                record = None
            if any(term in s.casefold() for s in _strings(record)):
                return True
            pos = lowered.find(needle, end)
        # A non-ASCII term whose case differs in the file is not found by the byte search; check every line.
        if not term.isascii():
            return any(term in s.casefold() for raw in blob.splitlines() for s in _strings(_loads(raw)))
        return False


_FIELDS = tuple(f.name for f in fields(Attempt))

# The two most frequent records, messages and model calls, are read with patterns over the fixed field order the
# transcript writer uses (a string value cannot hold an unescaped quote, so the keys cannot be faked inside one);
# anything else, or a line the patterns do not fit, is parsed as JSON.
_STR = rb'"((?:[^"\\]|\\.)*)"'
_PREFIX = re.compile(
    rb'\{"run_id":' + _STR + rb',"session_id":' + _STR + rb',"seq":-?\d+,"time":"([^"\\]*)",'
    rb'"stage":(?:null|"(?:[^"\\]|\\.)*"),"turn":(?:null|-?\d+),"kind":"(message|model_call)"'
)
_CALL = re.compile(rb',"role":"(?:[^"\\]|\\.)*","model":' + _STR)
_USAGE_KEY = b'"usage":{"prompt_tokens":'
_USAGE = re.compile(
    rb'"usage":\{"prompt_tokens":(\d+),"completion_tokens":(\d+)\},"latency_s":([-+.eE0-9]+),"retries":(\d+),'
)


_REQUESTS = re.compile(rb'"requests":(\d+)')


def _text(raw: bytes) -> str:
    return str(json.loads(b'"' + raw + b'"')) if b"\\" in raw else raw.decode()


def _record(raw: bytes) -> dict[str, Any]:
    """The fields the index needs from one line."""
    m = _PREFIX.match(raw)
    if m is not None:
        rec: dict[str, Any] = {
            "run_id": _text(m[1]),
            "session_id": _text(m[2]),
            "time": m[3].decode(),
            "kind": m[4].decode(),
        }
        if rec["kind"] == "message":
            return rec
        call = _CALL.match(raw, m.end())
        usage = _USAGE.match(raw, max(0, raw.rfind(_USAGE_KEY)))
        if call is not None and usage is not None:
            rec["model"] = _text(call[1])
            rec["usage"] = {"prompt_tokens": int(usage[1]), "completion_tokens": int(usage[2])}
            rec["latency_s"] = float(usage[3])
            rec["retries"] = int(usage[4])
            # The fields after usage are short and fixed (a quote inside a string value is escaped, so these keys
            # cannot be faked by a finish reason).
            tail = raw[usage.end() :]
            rec["cached"] = b'"cached":true' in tail
            rec["coalesced"] = b'"coalesced":true' in tail
            requests = _REQUESTS.search(tail)
            rec["requests"] = int(requests[1]) if requests else 1
            return rec
    value = _json_loads(raw)
    if not isinstance(value, dict):
        raise TypeError("not a JSON object")
    return value


def _write_atomically(path: Path, text: str) -> bool:
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
        return True
    except OSError:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        return False


def _call_count(value: object) -> int | None:
    """A model call's request or retry count when it is a whole number from 0 to ``CALL_COUNT_MAX``."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= CALL_COUNT_MAX:
        return value
    return None


def _drop(data: Any, loc: tuple[Any, ...]) -> None:
    """Remove the value at ``loc`` (a validation error's location) from nested dicts and lists."""
    for part in loc[:-1]:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return
    if isinstance(data, dict):
        data.pop(loc[-1], None)


def _loads(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return None
