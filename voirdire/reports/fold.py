"""The report contract: every protocol's report is a fold over a transcript's records.

``ReportBuilder.add(record)`` takes a transcript's records one at a time (``voirdire.transcript.iter_records``). It
holds a session's events only while that session is open; when the session ends (its verdict, or an error) they
are handed, as one ``SessionRecord``, to the protocol's ``ReportFold.session``, which keeps a small value (a few
counts, a row, a score per item), and dropped. ``ReportFold.finish`` turns the values into the report. So memory
does not grow with the events a run wrote, only with the small values, and ``voirdire report`` reads a transcript of
any length.

The numbers are those of the whole transcript loaded (``voirdire.transcript.load``): a session attempted by several
runs (a resume) counts once, by the last attempt that reached a verdict, else by its latest attempt; its events in
``seq`` order; sessions in the order they first appear; a torn last line is skipped. A file the runner cannot have
written that way (a session's events after its verdict, as in a file appended to itself) is read whole instead, so
the numbers never differ.

``Report`` (``voirdire.reports.report``) holds what any transcript can say, with the model calls' usage and cost
(``voirdire.reports.usage``); a file is read through a fold by ``voirdire.reports.stream``. ``voirdire report``
finds the protocol's fold through the registry, so it works on any protocol's transcript. A protocol module keeps
``report(transcript)``: a ``ReportFold`` is called with a loaded transcript.
"""

from __future__ import annotations

import contextlib
import itertools
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from voirdire.base import Column, IdList, SeenIds
from voirdire.reports.parts import Folded, session_parts, session_record
from voirdire.reports.prices import Prices, load_prices
from voirdire.reports.report import DEFAULT_CI, Context, Report
from voirdire.reports.spool import Kept, Spool
from voirdire.reports.stability import DEFAULT_DECIDED_AT, check_decided_at, stability
from voirdire.reports.usage import Usage, priced
from voirdire.transcript import (
    CallTally,
    ErrorEvent,
    Message,
    ModelCall,
    ParseFailure,
    RunHeader,
    SessionRecord,
    Transcript,
    Verdict,
    counting_attempt,
)

V = TypeVar("V")
R = TypeVar("R", bound=Report)


@dataclass(frozen=True)
class ReportFold(Generic[V, R]):
    """A protocol's report as a fold: ``session`` turns one finished (or abandoned) session into a small value --
    never its events --, ``finish`` turns the values, in session order, into the report.

    Calling it with a loaded ``Transcript`` gives that transcript's report (the ``report(transcript)`` every
    protocol module has); ``report_file`` streams a file through it. ``spooled``: the values are pickled to a
    temporary file as sessions end and ``finish`` reads them back one at a time (``voirdire.reports.spool``), so
    that a fold whose value per session is a row (LMvLM's) keeps none of them in memory."""

    session: Callable[[SessionRecord], V]
    finish: Callable[[Sequence[V], Context], R]
    spooled: bool = False
    row: Callable[[V], dict[str, Any]] | None = None
    """A session's row of the report from its value, where the report lists one row per session value: ``rows``
    then reads the rows without finishing the report (no statistics computed)."""

    def rows(self, transcript: Transcript) -> list[Any]:
        """The report's rows of ``transcript`` (``[]`` for a report without rows); its statistics are computed
        only for a fold that declares no ``row``."""
        if self.row is not None:
            return [self.row(self.session(s)) for s in transcript.sessions.values()]
        return list(getattr(self(transcript, ci=0), "rows", None) or [])

    def __call__(
        self,
        transcript: Transcript,
        *,
        prices: Prices | None = None,
        ci: float = DEFAULT_CI,
        decided_at: float = DEFAULT_DECIDED_AT,
    ) -> R:
        builder = ReportBuilder(self, prices=prices, ci=ci, decided_at=decided_at)
        builder.headers.extend(transcript.headers)
        for s in transcript.sessions.values():
            builder.add_session(s)
        return builder.report(path=transcript.path)  # type: ignore[return-value]


class Reread(Exception):
    """The records cannot be folded as they come (see ``report_file``); read the file whole."""


# A session's place in the fold's columns (``ReportBuilder``) whose attempt that counts is not settled yet.
_UNSETTLED = 2


def _counts_over(kept: tuple[bool, int], verdict: bool, order: int) -> bool:
    """Whether the attempt kept (its verdict, its order) still counts once an attempt (its verdict, its order) is
    added."""
    new = (verdict, order)
    return counting_attempt(sorted((kept, new), key=lambda a: a[1]), lambda a: a[0]) is kept


_CLOSING = (Verdict, ErrorEvent)  # the records that end a session's attempt


@dataclass
class Assembly:
    """A session attempt as its closing record left it -- the record, the session, whether it has a verdict, its
    counts and repeat -- shared by builders fed the same records one after another (``report_file``'s report and
    its ``alongside`` folds): the first to close the attempt assembles it, the others take it, since their records
    are the same objects. One slot: each record goes to every builder before the next is read."""

    last: tuple[Any, SessionRecord, tuple[bool, tuple[Any, ...], Any]] | None = None

    def take(
        self, record: Any, sid: str, run_id: str, events: list[Any]
    ) -> tuple[SessionRecord, tuple[bool, tuple[Any, ...], Any]]:
        """The attempt ``(sid, run_id)`` that ``record`` closed: the session and (verdict, counts, repeat)."""
        last = self.last
        if last is not None and last[0] is record and last[1].session_id == sid and last[1].run_id == run_id:
            return last[1], last[2]
        s = session_record(sid, run_id, events)
        self.last = (record, s, session_parts(s))
        return s, self.last[2]


@dataclass
class ReportBuilder:
    """Feed it records (``add``), or sessions of a loaded transcript (``add_session``); ``report`` folds them.

    ``fold`` is a protocol's ``ReportFold``, or a function choosing it from the run header (``voirdire report``,
    which learns the protocol from the file), or None for the shared counts alone. ``only``: the ids of the
    sessions to report on, in that order (a command's own items in a transcript that holds more); records of
    other sessions are skipped, their model calls too.

    ``once``: the records are a runner's own new file as it writes it (``LiveReport``), where every session has one
    attempt (its ids are unique within a run, and a new file holds no earlier run's): then a session's place is
    kept only while it is open, and its id not at all while the ids come in the ``expected`` order (``SeenIds``),
    so that what a run holds a session at its report is a few bytes, and memory stays flat. A record
    of a session whose attempt ended would count as another session there: the runner writes none."""

    fold: ReportFold[Any, Any] | Callable[[RunHeader | None], ReportFold[Any, Any]] | None = None
    prices: Prices | None = None
    only: Sequence[str] | None = None
    ci: float = DEFAULT_CI  # the level of the report's intervals (``Context.ci``); 0: none
    decided_at: float = DEFAULT_DECIDED_AT  # the majority share that decides an item over its repeats
    once: bool = False
    expected: IdList | None = None  # with ``once``: the ids in the order the sessions are expected (``SeenIds``)
    assembly: Assembly | None = None  # shared with the other builders fed the same records (``report_file``)
    headers: list[RunHeader] = field(default_factory=list)
    _open: dict[tuple[str, str], tuple[int, list[Any]]] = field(default_factory=dict)
    # The sessions kept, as columns rather than an object per session, so memory stays flat: each
    # session id's place, in order of first appearance; per place, whether the attempt that counts has a verdict
    # (or _UNSETTLED) and its order, in arrays (``Column``s: in chunks, not copied as they grow); the run ids of the
    # session's closed attempts and its counts (see ``session_parts``), both shared between sessions, and the
    # protocol's value.
    _place: dict[str, int] = field(default_factory=dict)
    _verdict: Column = field(default_factory=lambda: Column("B", _UNSETTLED))
    _orders: array[int] = field(default_factory=lambda: array("q"))
    _runs: list[tuple[str, ...]] = field(default_factory=list)
    _counts: Column = field(default_factory=lambda: Column("I"))  # each place's counts, by their number in:
    _count_table: list[tuple[Any, ...]] = field(default_factory=lambda: [()])  # the distinct counts (0: none yet)
    _count_number: dict[tuple[Any, ...], int] = field(default_factory=lambda: {(): 0})
    _values: Kept | Spool = field(default_factory=Kept)  # a Spool once the chosen fold asks for one
    _ids: Sequence[str] | None = None  # the session ids once ``report(last=True)`` dropped their places
    _seen_ids: SeenIds | None = None  # ``once``'s session ids
    _order: Iterator[int] = field(default_factory=itertools.count)
    _usage: dict[tuple[str, str], CallTally] = field(default_factory=dict)  # (role, model) -> its calls
    _shared: dict[Any, Any] = field(default_factory=dict)  # one copy of equal run ids, runs, counts, value tuples
    _chosen: ReportFold[Any, Any] | None = None
    _wanted: frozenset[str] | None = None
    # A repeat (``SessionRecord.repeat``) -> (item id, decision), of the attempt that counts: the stability section
    _repeats: dict[str, tuple[str, str | None]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_decided_at(self.decided_at)
        if isinstance(self.fold, ReportFold):
            self._choose(self.fold)
        self._wanted = frozenset(self.only) if self.only is not None else None
        if self.once:
            if self.only is not None:
                raise ValueError("ReportBuilder: 'once' reports every session of the file, not 'only' some")
            self._seen_ids = SeenIds(self.expected)

    # ------------------------------------------------------------------ feeding
    def add(self, record: Any) -> None:
        """One record of a transcript file, in file order."""
        if isinstance(record, RunHeader):
            self.headers.append(record)
            # A later run of another protocol: the last header picks the report, so the sessions are read again.
            if self._chosen is not None and self.fold is not self._chosen and self._pick(record) is not self._chosen:
                raise Reread
            return
        sid = record.session_id
        if self._wanted is not None and sid not in self._wanted:
            return
        if isinstance(record, ModelCall):
            self._tally(record)
        key = (sid, record.run_id)
        attempt = self._open.get(key)
        if attempt is None:
            p = self._seen(sid)
            if self._verdict[p] != _UNSETTLED and record.run_id in self._runs[p]:
                raise Reread  # an attempt that already ended goes on: not a file the runner wrote
            attempt = self._open[key] = (next(self._order), [])
        attempt[1].append(record)
        if isinstance(record, _CLOSING):
            self._close(key, record)

    def add_session(self, s: SessionRecord) -> None:
        """One session of a loaded transcript, its attempts already merged."""
        if self._wanted is not None and s.session_id not in self._wanted:
            return
        for e in s.events:
            if isinstance(e, ModelCall):
                self._tally(e)
        self._settle(s, next(self._order))

    def session_ids(self) -> Sequence[str]:
        """The sessions seen so far, in order of first appearance."""
        if self._seen_ids is not None:
            return self._seen_ids.ids()
        return list(self._place) if self._ids is None else self._ids

    def _seen(self, sid: str) -> int:
        """The session's place, a new one (not settled) the first time it is seen."""
        p = self._place.get(sid)
        if p is None:
            p = self._place[sid] = len(self._verdict)
            self._verdict.append(_UNSETTLED)
            self._counts.append(0)
            self._values.add()
            if self.once:  # one attempt a session: no runs or order to compare a later attempt's with
                assert self._seen_ids is not None
                self._seen_ids.append(sid)
            else:
                self._orders.append(0)
                self._runs.append(())
        return p

    def _choose(self, fold: ReportFold[Any, Any]) -> None:
        """The fold that reports the sessions; its values spooled if it asks (none is kept yet when it is chosen)."""
        self._chosen = fold
        if fold.spooled and isinstance(self._values, Kept):
            kept, self._values = self._values, Spool(len(self._values))
            for p, value in enumerate(kept.items):
                if value is not None:
                    self._values.put(p, value)

    # ------------------------------------------------------------------ folding
    def _pick(self, header: RunHeader | None) -> ReportFold[Any, Any]:
        if isinstance(self.fold, ReportFold):
            return self.fold
        if self.fold is None:
            return generic_report
        return self.fold(header)

    def _close(self, key: tuple[str, str], record: Any = None) -> None:
        """The attempt ``key`` ended (with ``record``, its verdict or error; None: the file ended first)."""
        order, events = self._open.pop(key)
        if self.assembly is not None and record is not None:
            s, assembled = self.assembly.take(record, key[0], self._share(key[1]), events)
        else:
            s = session_record(key[0], self._share(key[1]), events)
            assembled = session_parts(s)
        self._settle(s, order, assembled)

    def _settle(self, s: SessionRecord, order: int, assembled: tuple[bool, tuple[Any, ...], Any] | None = None) -> None:
        """Keep the attempt that counts, as ``load`` picks it: the last with a verdict, else the latest.
        ``assembled``: its verdict, counts and repeat (``session_parts``), where the caller has them."""
        verdict, counted, repeat = assembled if assembled is not None else session_parts(s)
        counting = self._attempt(s.session_id, s.run_id, verdict, order)
        if counting is None:
            return
        assert self._chosen is not None
        folded = Folded(s.session_id, s.run_id, verdict, counted, self._chosen.session(s), repeat, ())
        self._keep(*counting, folded, order)

    def add_folded(self, f: Folded) -> None:
        """One session folded where it ran (``parts.fold_session``; a ``--workers`` worker), as its records would
        be when the file holds them in one piece here."""
        if self._wanted is not None and f.session_id not in self._wanted:
            return
        for role, model, calls in f.calls:
            self._tally_of(role, model).add(calls)
        p = self._place.get(f.session_id)
        if p is not None and self._verdict[p] != _UNSETTLED and f.run_id in self._runs[p]:
            raise Reread  # an attempt that already ended goes on: not a file the runner wrote
        order = next(self._order)
        counting = self._attempt(f.session_id, self._share(f.run_id), f.verdict, order)
        if counting is not None:
            self._keep(*counting, f, order)

    def _attempt(self, sid: str, run_id: str, verdict: bool, order: int) -> tuple[int, tuple[str, ...]] | None:
        """An attempt of session ``sid`` ended: its place and the session's runs with it, or None when an earlier
        attempt still counts (as ``load`` picks: the last with a verdict, else the latest)."""
        p = self._seen(sid)
        if self.once:
            del self._place[sid]  # its one attempt ended: the place is not looked up again
            runs: tuple[str, ...] = ()
        else:
            runs = self._runs[p] = self._share(self._runs[p] + (run_id,))
        if self._verdict[p] != _UNSETTLED and _counts_over((bool(self._verdict[p]), self._orders[p]), verdict, order):
            return None
        if self._chosen is None:
            if not self.headers:  # sessions before any run header: which protocol reports them is not known yet
                raise Reread
            self._choose(self._pick(self.headers[-1]))
        return p, runs

    def _keep(self, p: int, runs: tuple[str, ...], f: Folded, order: int) -> None:
        """The attempt that counts of the session at place ``p``: counts shared, since most sessions of a run count
        alike; the value's tuples shared (``_compact``)."""
        self._verdict[p] = f.verdict
        if not self.once:
            self._orders[p], self._runs[p] = order, runs
        number = self._count_number.get(f.counts)
        if number is None:
            number = self._count_number[f.counts] = len(self._count_table)
            self._count_table.append(f.counts)
        self._counts[p] = number
        self._values.put(p, self._compact(f.value))
        if f.repeat is not None:
            self._repeats[f.session_id] = f.repeat
        else:
            self._repeats.pop(f.session_id, None)

    def _share(self, value: Any) -> Any:
        return self._shared.setdefault(value, value)

    def _compact(self, value: Any) -> Any:
        """A fold's value with its tuple fields shared (a NamedTuple's, and those of the NamedTuples in it: Table
        8's numbers, decision variants...): sessions of one run often hold equal ones, and ten thousand copies of
        ``(1, (1,), 0, False)`` are not needed. Only hashable tuples are shared, so nothing mutable is."""
        if not (isinstance(value, tuple) and hasattr(value, "_fields")):
            return value
        fields = []
        for x in value:
            if type(x) is tuple:
                with contextlib.suppress(TypeError):  # a tuple holding something unhashable (a dict) is kept as it is
                    x = self._share(x)
            elif isinstance(x, tuple) and hasattr(x, "_fields"):
                x = self._compact(x)
            fields.append(x)
        return value._make(fields)

    def _tally(self, e: ModelCall) -> None:
        self._tally_of(e.role, e.model).count_call(e)

    def _tally_of(self, role: str, model: str) -> CallTally:
        """The calls of ``model`` in ``role`` so far (in order of each's first call)."""
        tally = self._usage.get((role, model))
        if tally is None:
            tally = self._usage[(role, model)] = CallTally()
        return tally

    # ------------------------------------------------------------------ the report
    def report(self, path: str | None = None, *, last: bool = False) -> Report:
        """The report of everything added; sessions still open (a crash mid-run) count as they stand. ``last``:
        nothing is added after (a run's end): the table of session ids' places and the columns the counts come from
        are dropped before the protocol's ``finish`` computes its intervals, the ids kept as a list, so that a long
        run holds the least at its report's peak."""
        for key in list(self._open):
            self._close(key)
        if self._chosen is None:
            self._choose(self._pick(self.headers[-1] if self.headers else None))
        # The sessions' places in an array, the ids not copied: what a long run's report holds while it computes
        # its intervals is what stays flat.
        ids: Iterable[str]
        places: array[int] | range
        if self.once:  # places in order of first appearance, as the ids; every one of them, as a run ends
            ids = self.session_ids() if self._repeats else ()  # (only the repeated sessions' ids are read)
            unsettled = self._verdict.count(_UNSETTLED)
            places = (
                array("q", (p for p, v in enumerate(self._verdict) if v != _UNSETTLED))
                if unsettled
                else range(len(self._verdict))
            )
        else:
            ids = [sid for sid in self.only if sid in self._place] if self.only is not None else self._place
            places = array("q", (p for p in (self._place[sid] for sid in ids) if self._verdict[p] != _UNSETTLED))
        failures: Counter[str] = Counter()
        replies: Counter[str] = Counter()
        verdicts = errors = 0
        for p in places:
            counted = self._count_table[self._counts[p]]
            verdicts, errors = verdicts + bool(counted[0]), errors + bool(counted[1])
            failures.update(dict(counted[2]))
            replies.update(dict(counted[3]))
        shared = {
            "sessions": len(places),
            "verdicts": verdicts,
            "errors": errors,
            "parse_failures": dict(failures),
            "replies": dict(replies),
        }
        repeated = [(sid, *self._repeats[sid]) for sid in ids if sid in self._repeats] if self._repeats else []
        if last:
            if not self.once:
                self._ids, self._place = list(self._place), {}
            self._orders, self._runs, self._counts = array("q"), [], Column("I")
            ids = ()
        values = self._values.view(places)
        r = self._chosen.finish(values, Context(headers=list(self.headers), counts=shared, path=path, ci=self.ci))
        if path is not None:
            r.transcript = path
        r.stability = stability(repeated, decided_at=self.decided_at, level=self.ci or None, transcript=path)
        r.usage, r.total_usage = self.usage()
        return r

    def usage(self) -> tuple[dict[str, Usage], Usage]:
        """Per role (in order of first call) and in total, priced by ``prices`` (default: ``load_prices()``)."""
        return priced(self._usage, self.prices if self.prices is not None else load_prices())


def counts(sessions: Iterable[SessionRecord]) -> dict[str, object]:
    """The ``Report`` fields every protocol shares, for ``Report(**counts(...), ...)``."""
    sessions = list(sessions)
    failures: Counter[str] = Counter()
    replies: Counter[str] = Counter()
    for s in sessions:
        for e in s.events:
            if isinstance(e, ParseFailure):
                failures[f"{e.role} · {e.prompt or 'text'}"] += 1
            elif isinstance(e, Message) and e.receiver == "moderator":
                replies[f"{e.sender} · {e.prompt or 'text'}"] += 1
    return {
        "sessions": len(sessions),
        "verdicts": sum(s.verdict is not None for s in sessions),
        "errors": sum(s.verdict is None and bool(s.errors) for s in sessions),
        "parse_failures": dict(failures),
        "replies": dict(replies),
    }


def _generic_finish(values: Sequence[None], ctx: Context) -> Report:
    return Report(protocol=ctx.header.protocol if ctx.header else "unknown", **ctx.counts)


generic_report: ReportFold[None, Report] = ReportFold(session=lambda s: None, finish=_generic_finish)
"""The shared part alone: for a protocol that registers no report of its own."""


def as_fold(report: ReportFold[Any, Any] | Callable[[Transcript], Report]) -> ReportFold[Any, Any]:
    """A registration's report as a fold. A plain ``report(transcript)`` function (a third-party protocol written
    before folds) is folded by keeping each session whole and calling it at the end: it works, with the memory of
    a loaded transcript."""
    if isinstance(report, ReportFold):
        return report

    def finish(values: Sequence[SessionRecord], ctx: Context) -> Report:
        sessions = {s.session_id: s for s in values}
        return report(Transcript(path=ctx.path or "", headers=list(ctx.headers), sessions=sessions))  # no intervals

    return ReportFold(session=lambda s: s, finish=finish)
