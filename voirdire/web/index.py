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

The index is built in parts: ``attempt`` (one session attempt, counted line by line), ``records`` (what is read of
one line), ``spans`` (lines read by their byte spans), ``index_store`` (the ledger and what it covered),
``index_scan`` (building and refreshing it); ``TranscriptIndex`` here answers the pages.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

from voirdire.base import too_deep
from voirdire.transcript import Line, SessionRecord, SessionStart, counting_attempt
from voirdire.web.attempt import Attempt as Attempt, Forged
from voirdire.web.index_scan import IndexScan
from voirdire.web.index_store import cache_store as cache_store, default_store as default_store
from voirdire.web.ledger import Ledger
from voirdire.web.records import loads, strings
from voirdire.web.search_query import SearchQuery
from voirdire.web.spans import read_spans, whole_lines

_LINE: TypeAdapter[Any] = TypeAdapter(Line)

T = TypeVar("T")


class TranscriptIndex(IndexScan):
    """The index of one transcript file; ``refresh`` brings it up to date with the file (``IndexScan``), and the
    pages ask it for the sessions they show, read from the ledger and the file's spans."""

    @property
    def attempts(self) -> _Attempts:
        """Every attempt, as sid -> rid -> attempt (both in order of appearance), read from the ledger."""
        return _Attempts(self)

    def _reading(self, ask: Callable[[Ledger], T]) -> T:
        """``ask(ledger)`` under the lock; a ledger whose rows do not check out is rebuilt, then asked again."""
        with self._lock:
            self._open()
            assert self._ledger is not None
            try:
                return ask(self._ledger)
            except (Forged, sqlite3.DatabaseError):
                self._ledger.close()
                if self._ledger.store is not None:
                    with contextlib.suppress(OSError):
                        self._ledger.store.unlink()
                self._loaded = False
                self._open()
                self._rebuild()
                assert self._ledger is not None
                return ask(self._ledger)

    # ------------------------------------------------------------------ what pages ask
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

    def verdict_words(self) -> dict[str, bool]:
        """Each decision of the run as the accept/reject it stood for (one that stood for both left out)."""
        return self._reading(lambda ledger: ledger.verdict_words())

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

    def search_turns(self, q: SearchQuery, labelled: tuple[bool, list[str]] | None, limit: int | None) -> list[Any]:
        """This run's hits of the search across runs, as rows (``voirdire.web.ledger.Ledger.search``)."""
        return self._reading(lambda ledger: ledger.search(q, labelled, limit))

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
        if not self._rebuilt and not whole_lines(self.path, spans, self.size):
            return None
        events = []
        for raw in read_spans(self.path, spans).splitlines():
            if not raw.strip():
                continue
            rec = loads(raw) if not too_deep(raw) else None
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
        blob = read_spans(self.path, a.span_list())
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
            if any(term in s.casefold() for s in strings(record)):
                return True
            pos = lowered.find(needle, end)
        # A non-ASCII term whose case differs in the file is not found by the byte search; check every line.
        if not term.isascii():
            return any(term in s.casefold() for raw in blob.splitlines() for s in strings(loads(raw)))
        return False


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
