"""A byte-offset index of a transcript, so a viewer never parses a whole file to show one session.

A transcript is append-only JSONL in which the lines of concurrent sessions interleave. The index records, per
session attempt, the byte spans of its lines and a summary (status, verdict, counts, tokens, gold correctness), and
the offsets of the run headers. It is built once by one pass over the file into an SQLite file beside the
transcript (``.<name>.index``, or in the user's cache folder when that folder is read-only; ``voirdire.web.ledger``),
written every ``BATCH`` lines so that memory holds one batch, not the run, and pages ask it for the rows they show.
It is brought up to date by reading only the bytes appended since: the index remembers the size it covered and a
digest of the bytes before that point, so a rewritten or truncated transcript is indexed afresh. A half-written
last line is left for the next refresh.

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
import sqlite3
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

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
from voirdire.web.ledger import LEDGER_VERSION, Ledger, flag

try:  # a faster JSON parser when installed
    from orjson import loads as _json_loads
except ImportError:  # pragma: no cover
    _json_loads = json.loads

BATCH = 20_000  # lines read between writes to the ledger (what a scan holds in memory)
GOLD_BATCH = 1_000  # finished sessions whose gold the protocol's report is asked about at once
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
        models = {model: [getattr(tally, n) for n in _TALLY] for model, tally in self.models.items()}  # its row()
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
        self.file = ""  # the transcript's device and inode when indexed ("" unknown): another file in its place
        self.whole = False  # whether the index covered all of the file when ``mtime_ns`` was taken
        self.headers: list[HeaderRef] = []
        self.problems: list[str] = []
        self._tail_digest = ""
        self._hints: tuple[str, ...] = ()
        self._gold = ""  # the verdict statistic that says whether it agrees with gold (display hints)
        self._header_cache: dict[str, RunHeader] = {}
        self._lock = threading.RLock()
        self._loaded = False
        self._rebuilt = True  # False while the rows come from an index file (anyone could have edited it)
        self._ledger: Ledger | None = None
        # The attempts the lines being read touch, written to the ledger every BATCH lines (the memory a scan holds)
        self._batch: dict[tuple[str, str], Attempt] = {}
        self._ids: dict[tuple[str, str], tuple[int, int]] = {}  # aid, sord of each attempt in the batch
        self._kin: dict[str, list[list[Any]]] = {}  # sid -> [aid, rid, sord, reached a verdict] of its attempts
        self._next = (1, 0)  # the next attempt's aid, the next session's sord
        self._starts: dict[tuple[str, str], bytes] = {}  # this batch's session_start lines, for the report
        # What pages read of the whole run, kept until the file changes: the counting attempts in order (built only
        # when a page asks for all of them), the runs list's sums, and ``derived`` values.
        self._order: list[Attempt] | None = None
        self._totals: dict[str, Any] | None = None
        self._derived: dict[str, Any] = {}

    @property
    def attempts(self) -> _Attempts:
        """Every attempt, as sid -> rid -> attempt (both in order of appearance), read from the ledger."""
        return _Attempts(self)

    # ------------------------------------------------------------------ keeping up with the file
    def refresh(self) -> bool:
        """Index what was appended since the last call; re-index a file that was rewritten. True if it changed."""
        with self._lock:
            try:
                return self._refresh()
            except sqlite3.Error:
                # The index file was removed or replaced under the open connection (SQLite then refuses every
                # write: "attempt to write a readonly database"): it is opened again, and the run indexed afresh.
                self._reopen()
                return self._refresh()

    def _reopen(self) -> None:
        if self._ledger is not None:
            self._ledger.close()
        self._ledger, self._loaded = None, False
        self.size = self.lines = 0
        self.mtime_ns, self.file, self.whole = 0, "", False
        self._open()
        self._reset()
        self._rebuilt = True

    def _rewritten(self, st: os.stat_result) -> bool:
        """Whether the file is no longer (a longer copy of) the one indexed: another file put in its place, a
        shorter one, one of the same size modified since, or one whose last indexed bytes changed."""
        if self.file and self.file != f"{st.st_dev}:{st.st_ino}":
            return True
        if st.st_size < self.size:
            return True
        if self.whole and st.st_size == self.size and st.st_mtime_ns != self.mtime_ns:
            return True  # written in place (an append makes it longer)
        return not self._appended_only()

    def _refresh(self) -> bool:
        self._open()
        try:
            st = self.path.stat()
        except OSError as exc:
            raise ViewerError(f"{self.path}: {exc.strerror or exc}") from None
        identity = f"{st.st_dev}:{st.st_ino}"
        if st.st_size == self.size and st.st_mtime_ns == self.mtime_ns and self.file in ("", identity):
            return False
        self._follow()
        if self._rewritten(st):
            self._reset()
            self._rebuilt = True
        try:
            changed = self._scan(st.st_size)
        except _Forged:  # a stored attempt the new lines add to does not check out: everything read afresh
            self._reset()
            self._rebuilt = True
            changed = self._scan(st.st_size)
        self.mtime_ns, self.file, self.whole = st.st_mtime_ns, identity, self.size == st.st_size
        self._save_meta()
        return changed

    def _follow(self) -> None:
        """Take up what another process (a second viewer of the same file) wrote to the ledger since this one read
        it, so that the rows it added are not indexed twice."""
        assert self._ledger is not None
        if self._ledger.store is None:
            return
        meta = self._ledger.meta()
        if meta.get("size", "0") != str(self.size):
            try:
                self._restore(meta)
            except (ValueError, TypeError, KeyError, sqlite3.Error):
                self._reset()

    def _reset(self) -> None:
        self._changed()
        self.size = self.lines = 0
        self.headers, self.problems = [], []
        self._tail_digest = ""
        self._header_cache = {}
        self._batch, self._ids, self._kin, self._starts = {}, {}, {}, {}
        self._next = (1, 0)
        if self._ledger is not None:
            self._ledger.clear()

    def _changed(self) -> None:
        self._order = self._totals = None
        self._derived = {}

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
        (``voirdire.transcript.max_line_bytes``) is read past, never held, and named among the problems. The
        attempts touched are written to the ledger every ``BATCH`` lines, so memory stays bounded by the batch."""
        cap = max_line_bytes()
        start = self.size
        with self.path.open("rb") as fh:
            fh.seek(self.size)
            pos = self.size
            finished: list[tuple[Attempt, dict[str, Any]]] = []
            since = 0
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
                since += 1
                if since >= BATCH:
                    self._flush(pos, finished)
                    fh.seek(pos)
                    since = 0
            if pos == start:
                return False
            self._flush(pos, finished, last=True)
        return True

    def _flush(self, pos: int, finished: list[tuple[Attempt, dict[str, Any]]], last: bool = False) -> None:
        """Write the batch's attempts, which of its sessions' attempts counts and how far the index reaches. The
        report that knows gold is asked about every ``GOLD_BATCH`` finished sessions (it costs the same for 1 as for
        1,000): until then those attempts stay in the batch, and are written again once checked."""
        assert self._ledger is not None
        self.size = pos  # the lines up to here are read (a header among them is looked up by the gold check)
        with self.path.open("rb") as fh:
            self._tail_digest = self._tail(fh, pos)
        if last or len(finished) >= GOLD_BATCH:
            self._check_gold(finished)
            finished.clear()
            self._starts = {}
        written = []
        for key, a in self._batch.items():
            aid, sord = self._ids[key]
            row = a.row()
            columns = (a.status, a.decision, flag(a.accepted), flag(a.correct), a.parse_failures, a.errors, a.calls,
                       a.prompt_tokens, a.completion_tokens, a.latency_s, int(a.human))  # fmt: skip
            models = [(m, t.prompt_tokens, t.completion_tokens, t.requests) for m, t in a.models.items()]
            written.append((aid, a.sid, a.rid, sord, columns, json.dumps(row, separators=(",", ":")), models))
        self._ledger.write(written)
        chosen = []
        for sid, kin in self._kin.items():
            for k in kin:
                a = self._batch.get((sid, k[1]))
                k[3] = k[3] if a is None else a.decision is not None
            best = counting_attempt(kin, lambda k: bool(k[3]))
            if best is not None:
                chosen.append((sid, int(best[0])))
        self._ledger.set_counting(chosen)
        self._save_meta()
        waiting = {(a.sid, a.rid) for a, _ in finished}
        self._batch = {key: a for key, a in self._batch.items() if key in waiting}
        self._ids = {key: ids for key, ids in self._ids.items() if key in waiting}
        self._kin = {sid: kin for sid, kin in self._kin.items() if any((sid, k[1]) in waiting for k in kin)}
        self._changed()

    def _attempt(self, sid: str, rid: str) -> Attempt:
        """The attempt ``rid`` at ``sid`` as the lines read so far leave it: from the batch, the ledger, or new."""
        a = self._batch.get((sid, rid))
        if a is not None:
            return a
        assert self._ledger is not None
        kin = self._kin.get(sid)
        if kin is None:
            kin = self._kin[sid] = [list(k) for k in self._ledger.kin(sid)]
        known = next((k for k in kin if k[1] == rid), None)
        if known is not None:
            a = self._attempt_of(self._ledger.row(known[0]))
            ids = (known[0], known[2])
        else:
            aid, sord = self._next
            ids = (aid, kin[0][2] if kin else sord)
            self._next = (aid + 1, sord if kin else sord + 1)
            kin.append([aid, rid, ids[1], False])
            a = Attempt(sid=sid, rid=rid)
        self._batch[sid, rid] = a
        self._ids[sid, rid] = ids
        return a

    def _line(self, raw: bytes, offset: int, length: int, finished: list[tuple[Attempt, dict[str, Any]]]) -> None:
        try:
            if too_deep(raw):
                raise ValueError(f"JSON nested more than {MAX_JSON_DEPTH} levels")
            rec = _record(raw)
            kind = rec["kind"]
            if kind == "header":
                self.headers.append(HeaderRef(rec["run_id"], offset, length))
                assert self._ledger is not None
                self._ledger.add_header(len(self.headers) - 1, str(rec["run_id"]), offset, length)
                display = rec.get("display") or {}
                self._hints = tuple(display.get("item_fields", ()))
                self._gold = str(((display.get("views") or {}).get("verdict") or {}).get("gold") or "")
                return
            sid, rid = str(rec["session_id"]), str(rec["run_id"])
        except (ValueError, KeyError, TypeError) as exc:
            why = str(exc) if "nested" in str(exc) else type(exc).__name__
            self.problems.append(f"{self.path}:{self.lines}: not a transcript record ({why})")
            return
        a = self._attempt(sid, rid)
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
            # The provider's prompt cache, where it cached (parts of the prompt tokens, priced at their own rates).
            read = token_count(usage.get("cache_read_tokens", 0)) or 0
            write = token_count(usage.get("cache_write_tokens", 0)) or 0
            tally.count(p, c, requests=requests, cached=cached, coalesced=coalesced, latency_s=t,
                        cache_read=min(read, p), cache_write=min(write, p))  # fmt: skip
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
    def _open(self) -> None:
        """Open the ledger (beside the transcript, else in the cache; in memory without ``persist``) and take
        what it covered, once; a ledger of another file, version or shape is cleared."""
        if self._loaded:
            return
        self._loaded = True
        if not self.persist:
            self._ledger = Ledger.open(None)
            return
        try:
            places = dict.fromkeys((self.store, default_store(self.path), cache_store(self.path)))
            self._ledger = Ledger.open(list(places))
        except OSError:
            self._ledger = Ledger.open(None)  # nowhere to keep it: kept for this process only
            return
        self.store = self._ledger.store or self.store
        try:
            self._restore(self._ledger.meta())
        except (ValueError, TypeError, KeyError, sqlite3.Error):
            self._reset()

    def _restore(self, meta: dict[str, str]) -> None:
        assert self._ledger is not None
        if "size" not in meta:
            self._reset()
            return
        if meta.get("version") != LEDGER_VERSION or meta.get("path") != str(self.path.resolve()):
            raise ValueError("another index")
        size, lines, mtime_ns = int(meta["size"]), int(meta["lines"]), int(meta["mtime_ns"])
        hints, problems = json.loads(meta["hints"]), json.loads(meta["problems"])
        if not (isinstance(hints, list) and isinstance(problems, list) and min(size, lines, mtime_ns) >= 0):
            raise ValueError("meta")
        headers = self._ledger.headers()
        for rid, pos, length in headers:
            if not (isinstance(rid, str) and type(pos) is int and type(length) is int):
                raise ValueError("headers")
        self.size, self.lines, self.mtime_ns = size, lines, mtime_ns
        self.file, self.whole = str(meta.get("file", "")), meta.get("whole") == "1"
        self._tail_digest, self._gold = str(meta["tail"]), str(meta["gold"])
        self._hints = tuple(str(h) for h in hints)
        self.problems = [str(p) for p in problems]
        self.headers = [HeaderRef(*h) for h in headers]
        self._next = self._ledger.ends()
        self._changed()
        self._rebuilt = False  # its rows are checked as they are read, its spans against the file

    def _save_meta(self) -> None:
        assert self._ledger is not None
        self._ledger.set_meta(
            {
                "version": LEDGER_VERSION,
                "path": str(self.path.resolve()),
                "size": str(self.size),
                "lines": str(self.lines),
                "mtime_ns": str(self.mtime_ns),
                "file": self.file,
                "whole": "1" if self.whole else "0",
                "tail": self._tail_digest,
                "hints": json.dumps(list(self._hints)),
                "gold": self._gold,
                "problems": json.dumps(self.problems[-20:]),
            }
        )
        self._ledger.commit()

    def _attempt_of(self, text: Any) -> Attempt:
        """An attempt from its ledger row; checked (``_Forged`` if it does not check out) unless this process
        wrote every row itself."""
        try:
            values = dict(zip(_FIELDS, json.loads(text), strict=True))
            values["models"] = {str(m): CallTally.from_row(r) for m, r in dict(values["models"]).items()}
            if self._rebuilt:
                return Attempt(**values)
            a = _ATTEMPT.validate_python(values)
            if isinstance(a.spans, str) and not _SPANS.fullmatch(a.spans):
                raise ValueError("spans")
            return a
        except (ValueError, TypeError, KeyError) as exc:
            raise _Forged(str(exc)) from None

    def _reading(self, ask: Callable[[Ledger], T]) -> T:
        """``ask(ledger)`` under the lock; a ledger whose rows do not check out is rebuilt, then asked again."""
        with self._lock:
            self._open()
            assert self._ledger is not None
            try:
                return ask(self._ledger)
            except (_Forged, sqlite3.DatabaseError):
                self._ledger.close()
                if self._ledger.store is not None:
                    with contextlib.suppress(OSError):
                        self._ledger.store.unlink()
                self._loaded = False
                self._open()
                self._rebuild()
                assert self._ledger is not None
                return ask(self._ledger)

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
            self._open()
            self._rebuilt = True
            self._reset()
            try:
                st = self.path.stat()
            except OSError as exc:
                raise ViewerError(f"{self.path}: {exc.strerror or exc}") from None
            self._scan(st.st_size)
            self.mtime_ns, self.file = st.st_mtime_ns, f"{st.st_dev}:{st.st_ino}"
            self.whole = self.size == st.st_size
            self._save_meta()

    def sessions(self) -> list[Attempt]:
        """The attempt that counts for each session, in order of first appearance."""
        with self._lock:
            return list(self._counting())

    def page(self, where: str = "", args: Sequence[Any] = (), limit: int = -1, offset: int = 0) -> list[Attempt]:
        """The attempts that count and pass ``where`` (SQL over ``voirdire.web.ledger.COLUMNS``), in session order,
        ``limit`` of them from ``offset``: one page of the sessions list, read without the rest."""
        def ask(ledger: Ledger) -> list[Attempt]:
            return [self._attempt_of(r) for r in ledger.counting_rows(where, args, limit, offset)]

        return self._reading(ask)

    def count(self, where: str = "", args: Sequence[Any] = ()) -> int:
        """How many sessions pass ``where`` (all of them without one)."""
        return self._reading(lambda ledger: ledger.count(where, args))

    def decisions(self) -> list[tuple[str, int]]:
        """The run's decisions and how many sessions reached each, most frequent first."""
        return self._reading(lambda ledger: ledger.decisions())

    def totals(self) -> dict[str, Any]:
        """The runs list's sums (sessions, finished, errors, running, parse failures, calls, tokens, model time, a
        human's sessions, gold judged and right), the decisions, and the billed calls of every attempt (resumed
        attempts were paid for too); kept until the file changes."""
        with self._lock:
            if self._totals is None:
                def ask(ledger: Ledger) -> dict[str, Any]:
                    return {**ledger.totals(), "decisions": ledger.decisions(), "billed": ledger.billed()}

                self._totals = self._reading(ask)
            return self._totals

    def neighbours(self, sid: str) -> tuple[str | None, str | None]:
        """The sessions before and after ``sid`` in ``sessions()`` order (None at either end, or for no session)."""
        return self._reading(lambda ledger: ledger.neighbours(sid))

    def derived(self, name: str, compute: Callable[[TranscriptIndex], T]) -> T:
        """``compute(self)``, kept until the file changes: what a page reads of the whole run (a session page's
        verdict set) is computed once, not on every request."""
        with self._lock:
            if name not in self._derived:
                self._derived[name] = compute(self)
            return self._derived[name]  # type: ignore[no-any-return]

    def _counting(self) -> list[Attempt]:
        with self._lock:
            if self._order is None:
                self._order = self.page()
            return self._order

    def session(self, sid: str) -> Attempt | None:
        def ask(ledger: Ledger) -> Attempt | None:
            every = [self._attempt_of(r) for r in ledger.session_rows(sid)]
            return counting_attempt(every, lambda a: a.decision is not None)

        return self._reading(ask)

    def session_attempts(self, sid: str) -> dict[str, Attempt]:
        """Every attempt at ``sid``: rid -> attempt, in order of appearance."""
        return self._reading(lambda ledger: {a.rid: a for a in map(self._attempt_of, ledger.session_rows(sid))})

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
_TALLY = tuple(f.name for f in fields(CallTally))  # CallTally.row()'s order, read without a deep copy

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


class _Forged(ValueError):
    """A ledger row that is no attempt this index wrote."""


class _Attempts(Mapping[str, dict[str, Attempt]]):
    """sid -> rid -> attempt over the ledger: each session's attempts are read when asked for."""

    def __init__(self, index: TranscriptIndex) -> None:
        self.index = index

    def __getitem__(self, sid: str) -> dict[str, Attempt]:
        found = self.index.session_attempts(sid)
        if not found:
            raise KeyError(sid)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter([a.sid for a in self.index.sessions()])

    def __len__(self) -> int:
        return self.index.count()
