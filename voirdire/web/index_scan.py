"""Building and refreshing a transcript index (``voirdire.web.index``): one pass over the lines appended since the
last, each counted into its session attempt and its searched text (an item, a message, a verdict) kept for the
search across runs, the attempts touched and the turns read written to the ledger every ``BATCH`` lines;
gold correctness asked of the protocol's report for verdicts that do not say; a rewritten or truncated file, or a
ledger that does not check out, indexed afresh."""

from __future__ import annotations

import json
import os
import sqlite3
import warnings
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from voirdire.base import MAX_JSON_DEPTH, VoirdireError, too_deep
from voirdire.reports import agrees_with_gold, gold_labels
from voirdire.transcript import (
    RunHeader,
    SessionRecord,
    SessionStart,
    Transcript,
    Verdict,
    bounded_lines,
    counting_attempt,
    max_line_bytes,
)
from voirdire.web.attempt import Attempt, Forged, HeaderRef
from voirdire.web.errors import ViewerError
from voirdire.web.index_store import IndexStore
from voirdire.web.ledger import flag
from voirdire.web.records import record, title, turn_text
from voirdire.web.spans import header_line, read_line, readable_header, tail_digest

BATCH = 20_000  # lines read between writes to the ledger (what a scan holds in memory)
_SEARCHED = frozenset({"session_start", "message", "verdict"})  # the kinds of record ``turn_text`` reads
GOLD_BATCH = 1_000  # finished sessions whose gold the protocol's report is asked about at once

Finished = list[tuple[Attempt, dict[str, Any]]]  # verdicts whose gold the protocol's report is to be asked about
Progress = Callable[[int, int], None]  # bytes read by this refresh so far, bytes it has to read


class IndexScan(IndexStore):
    """The index kept up to date with its file: ``refresh`` reads what was appended, ``_rebuild`` reads it all."""

    def refresh(self, progress: Progress | None = None) -> bool:
        """Index what was appended since the last call; re-index a file that was rewritten. True if it changed.
        ``progress`` is told the bytes read so far and the bytes to read, after every batch."""
        with self._lock:
            try:
                return self._refresh(progress)
            except sqlite3.Error:
                # The index file was removed or replaced under the open connection (SQLite then refuses every
                # write: "attempt to write a readonly database"): it is opened again, and the run indexed afresh.
                self._reopen()
                return self._refresh(progress)

    def stale(self) -> int:
        """Bytes of the file not indexed yet (all of it when it was rewritten)."""
        with self._lock:
            self._open()
            st = self._stat()
            self._follow()
            return st.st_size if self._rewritten(st) else max(0, st.st_size - self.size)

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

    def _stat(self) -> os.stat_result:
        try:
            return self.path.stat()
        except OSError as exc:
            raise ViewerError(f"{self.path}: {exc.strerror or exc}") from None

    def _refresh(self, progress: Progress | None = None) -> bool:
        self._open()
        st = self._stat()
        identity = f"{st.st_dev}:{st.st_ino}"
        if st.st_size == self.size and st.st_mtime_ns == self.mtime_ns and self.file in ("", identity):
            return False
        self._follow()
        if self._rewritten(st):
            self._reset()
            self._rebuilt = True
        try:
            changed = self._scan(st.st_size, progress)
        except Forged:  # a stored attempt the new lines add to does not check out: everything read afresh
            self._reset()
            self._rebuilt = True
            changed = self._scan(st.st_size, progress)
        self.mtime_ns, self.file, self.whole = st.st_mtime_ns, identity, self.size == st.st_size
        self._save_meta()
        return changed

    def _rebuild(self) -> None:
        """Index the file afresh: the index (loaded from a file anyone could have edited) disagrees with it."""
        with self._lock:
            self._open()
            self._rebuilt = True
            self._reset()
            st = self._stat()
            self._scan(st.st_size)
            self.mtime_ns, self.file = st.st_mtime_ns, f"{st.st_dev}:{st.st_ino}"
            self.whole = self.size == st.st_size
            self._save_meta()

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

    def _appended_only(self) -> bool:
        if self.size == 0:
            return True
        with self.path.open("rb") as fh:
            return tail_digest(fh, self.size) == self._tail_digest

    # ------------------------------------------------------------------ the scan
    def _scan(self, size: int, progress: Progress | None = None) -> bool:
        """Index the whole lines from ``self.size`` on, one at a time: a line longer than the reading cap
        (``voirdire.transcript.max_line_bytes``) is read past, never held, and named among the problems. The
        attempts touched are written to the ledger every ``BATCH`` lines, so memory stays bounded by the batch."""
        cap = max_line_bytes()
        start = self.size
        with self.path.open("rb") as fh:
            fh.seek(self.size)
            pos = self.size
            finished: Finished = []
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
                    if progress is not None:
                        progress(pos - start, size - start)
            if pos == start:
                return False
            self._flush(pos, finished, last=True)
        if progress is not None:
            progress(pos - start, size - start)
        return True

    def _flush(self, pos: int, finished: Finished, last: bool = False) -> None:
        """Write the batch's attempts, which of its sessions' attempts counts and how far the index reaches. The
        report that knows gold is asked about every ``GOLD_BATCH`` finished sessions (it costs the same for 1 as for
        1,000): until then those attempts stay in the batch, and are written again once checked."""
        assert self._ledger is not None
        self.size = pos  # the lines up to here are read (a header among them is looked up by the gold check)
        with self.path.open("rb") as fh:
            self._tail_digest = tail_digest(fh, pos)
        if last or len(finished) >= GOLD_BATCH:
            self._check_gold(finished)
            finished.clear()
            self._starts = {}
        self._write_batch()
        self._ledger.add_turns(self._turns)
        self._turns.clear()
        self._save_meta()
        waiting = {(a.sid, a.rid) for a, _ in finished}
        self._batch = {key: a for key, a in self._batch.items() if key in waiting}
        self._ids = {key: ids for key, ids in self._ids.items() if key in waiting}
        self._kin = {sid: kin for sid, kin in self._kin.items() if any((sid, k[1]) in waiting for k in kin)}
        self._changed()

    def _write_batch(self) -> None:
        """The batch's attempts to the ledger, and which attempt of each of their sessions counts."""
        assert self._ledger is not None
        written = []
        for key, a in self._batch.items():
            aid, sord = self._ids[key]
            row = a.row()
            columns = (a.status, a.decision, flag(a.accepted), flag(a.correct), a.parse_failures, a.errors, a.calls,
                       a.prompt_tokens, a.completion_tokens, a.latency_s, int(a.human), a.item_id)  # fmt: skip
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

    # ------------------------------------------------------------------ one line
    def _line(self, raw: bytes, offset: int, length: int, finished: Finished) -> None:
        read = self._session_record(raw, offset, length)
        if read is None:
            return
        sid, rid, rec = read
        kind = rec["kind"]
        a = self._attempt(sid, rid)
        turn = turn_text(rec) if kind in _SEARCHED else None
        if turn is not None:
            seq = rec.get("seq")
            self._turns.append((turn[1], self._ids[sid, rid][0], turn[0], kind, seq if type(seq) is int else None))
        a.add_span(offset, length)
        a.events += 1
        a.first = a.first or rec.get("time")
        a.last = rec.get("time")
        if kind == "session_start":
            a.start = [offset, length]
            self._starts[a.sid, a.rid] = raw
            a.item_id = rec.get("item_id")
            a.title = title(rec.get("item") or {}, self._hints)
        elif kind == "verdict":
            a.decision = str(rec["decision"])
            a.accepted = rec.get("accepted")
            stats = rec.get("statistics")
            a.correct = agrees_with_gold(stats if isinstance(stats, dict) else {}, self._gold)
            a.gold_checked = a.correct is not None
            if not a.gold_checked:
                finished.append((a, rec))
        else:
            problem = a.count(kind, rec)
            if problem is not None:
                self.problems.append(f"{self.path}:{self.lines}: {problem}")

    def _session_record(self, raw: bytes, offset: int, length: int) -> tuple[str, str, dict[str, Any]] | None:
        """The line's session, run and record when it belongs to a session; a run header is indexed here, and a
        line that is no transcript record named among the problems (None for both)."""
        try:
            if too_deep(raw):
                raise ValueError(f"JSON nested more than {MAX_JSON_DEPTH} levels")
            rec = record(raw)
            if rec["kind"] == "header":
                self._header_line(rec, offset, length)
                return None
            sid, rid = str(rec["session_id"]), str(rec["run_id"])
        except (ValueError, KeyError, TypeError) as exc:
            why = str(exc) if "nested" in str(exc) else type(exc).__name__
            self.problems.append(f"{self.path}:{self.lines}: not a transcript record ({why})")
            return None
        return sid, rid, rec

    def _header_line(self, rec: dict[str, Any], offset: int, length: int) -> None:
        self.headers.append(HeaderRef(rec["run_id"], offset, length))
        assert self._ledger is not None
        protocol = str(rec.get("protocol") or "")
        self._ledger.add_header(len(self.headers) - 1, str(rec["run_id"]), offset, length, protocol)
        display = rec.get("display") or {}
        self._hints = tuple(display.get("item_fields", ()))
        self._gold = str(((display.get("views") or {}).get("verdict") or {}).get("gold") or "")

    # ------------------------------------------------------------------ gold and headers
    def _check_gold(self, finished: Finished) -> None:
        """Gold correctness from the protocol's report rows (``id``, ``gold``), for verdicts that do not say."""
        header = self.header()
        if not finished or header is None:
            return
        try:
            from voirdire.registry import get

            reg = get(header.protocol)  # that protocol's registration alone, not every installed one's
        except VoirdireError:  # not installed, or broken: no gold known here
            reg = None
        sessions = {}
        for a, verdict in finished:
            a.gold_checked = True
            start = self._starts.get((a.sid, a.rid)) or (read_line(self.path, a.start) if a.start else None)
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
                rows = reg.fold.rows(transcript)  # the rows only: no statistics to compute
        except Exception:  # a report that cannot read a partial transcript knows no gold here
            return
        labels = gold_labels(rows)
        for a, _ in finished:
            if a.item_id is not None:
                a.correct = agrees_with_gold({}, accepted=a.accepted, label=labels.get(a.item_id))

    def header(self, run_id: str | None = None) -> RunHeader | None:
        """The header of ``run_id`` (the last one if None or unknown)."""
        with self._lock:
            ref = next((h for h in reversed(self.headers) if h.run_id == run_id), None) if run_id else None
            ref = ref or (self.headers[-1] if self.headers else None)
            if ref is None:
                return None
            if ref.run_id not in self._header_cache:
                span = [ref.offset, ref.length]
                raw = header_line(self.path, ref, self.size) if not self._rebuilt else read_line(self.path, span)
                if raw is None:  # the index does not agree with the file: rebuilt, then asked again
                    self._rebuild()
                    return self.header(run_id)
                self._header_cache[ref.run_id] = readable_header(self.path, raw or b"", self.problems)
            return self._header_cache[ref.run_id]
