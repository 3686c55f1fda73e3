"""Reports read from a file (``report_file``: streamed record by record, or loaded whole where the file cannot be
folded as it comes) and from a run as it writes (``LiveReport``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from voirdire.base import IdList
from voirdire.reports.fold import Assembly, ReportBuilder, ReportFold, Reread
from voirdire.reports.parts import Folded, fold_session
from voirdire.reports.prices import Prices, load_prices
from voirdire.reports.report import DEFAULT_CI, Report
from voirdire.reports.stability import DEFAULT_DECIDED_AT
from voirdire.transcript import (
    ModelCall,
    RunHeader,
    iter_records,
    load,
)


class LiveReport:
    """The end-of-run report folded from a run's records as its writer appends them (``voirdire.transcript.
    observing(path, live)``), so the transcript is not read back at the end. ``result`` is None when a record was
    missed -- written as text by a worker process (but one forked from this one, which folds its sessions itself:
    ``fold_session``) or a Ray actor, masked, or one the stream fold cannot take as it comes (``Reread``) --: then
    the caller reads the file back (``report_file``), which gives the same report."""

    def __init__(
        self,
        fold: ReportFold[Any, Any] | None,
        *,
        prices: Prices,
        ci: float,
        decided_at: float,
        expected: IdList | None = None,
    ) -> None:
        """``expected``: the run's session ids, in the order its sessions start (a streamed dataset's ids, the
        run's own without repeats), so that the report does not keep them again while they come in that order."""
        # A run's own new file: one attempt a session (a resumed run's file is read back instead, not folded here)
        self.builder = ReportBuilder(fold, prices=prices, ci=ci, decided_at=decided_at, once=True, expected=expected)
        self.missed = False
        self.seen = 0
        self.done = False  # the report was made (the run's end)

    def __call__(self, record: Any) -> None:
        if self.missed:
            return
        if record is None:
            self.missed = True
            return
        self.seen += 1
        if self.done:
            self.missed = True  # a record after the report: the report would not be the file's
            return
        try:
            if isinstance(record, Folded):  # a session folded in the worker that ran it
                self.builder.add_folded(record)
            else:
                self.builder.add(record)
        except Exception:  # never the writer's problem: the report is read back instead
            self.missed = True

    def fold_session(self, records: Sequence[Any]) -> Folded | None:
        """One session's records folded where they were made -- by a forked worker, with its copy of this object
        -- for the run's process, which is given the part (``Folded``) as the session's lines are written; None
        when the report has no protocol fold to fold with."""
        fold = self.builder.fold
        return fold_session(fold, records) if isinstance(fold, ReportFold) and records else None

    def result(self, path: str | Path, *, started: int | None = None) -> tuple[Report, ReportBuilder] | None:
        """The run's report and its builder, or None: read the file back. ``started``: how many sessions the run
        started; a fold of another number of sessions (a record of a session after its attempt ended, which the
        one-attempt fold would count as one more) is not the file's report."""
        # Nothing seen: the run's writer was not among the observed ones (opened before ``observing``), so an
        # empty fold would be a wrong report, not an empty run; read the file back.
        if self.missed or not self.seen or (started is not None and started != len(self.builder._verdict)):
            return None
        self.done = True
        return self.builder.report(path=str(path), last=True), self.builder


def report_file(
    path: str | Path,
    fold: ReportFold[Any, Any] | Callable[[RunHeader | None], ReportFold[Any, Any]] | None = None,
    *,
    prices: Prices | None = None,
    only: Sequence[str] | None = None,
    ci: float = DEFAULT_CI,
    decided_at: float = DEFAULT_DECIDED_AT,
    alongside: Sequence[ReportFold[Any, Any] | Callable[[RunHeader | None], ReportFold[Any, Any]]] = (),
) -> tuple[Report, ReportBuilder]:
    """The report of a transcript file, streamed record by record; the builder too (its headers, its session ids).

    A file the runner cannot have written record by record like this -- events of a session after its verdict or
    error (a file appended to itself), sessions before any header, runs of two protocols -- is loaded whole
    instead (``load``), so the report is the same either way; only the memory differs.

    ``alongside``: more folds (or, as ``fold``, a header's fold) made from the same records in the same pass (one
    parse of the file for all; no intervals), each finished as the report is; what their ``finish`` takes is what
    they are for, their reports are dropped. ``voirdire report`` reads its report and its certificate's folds so."""
    prices = prices if prices is not None else load_prices()

    def builders() -> list[ReportBuilder]:
        # One assembly of each session for all the builders (their records are the same objects, in turn).
        shared = Assembly() if alongside else None
        return [
            ReportBuilder(fold, prices=prices, only=only, ci=ci, decided_at=decided_at, assembly=shared),
            *(ReportBuilder(f, prices=prices, only=only, ci=0, decided_at=decided_at, assembly=shared)
              for f in alongside),
        ]  # fmt: skip

    made = builders()
    try:
        for record in iter_records(path):
            for builder in made:
                builder.add(record)
    except Reread:
        made = builders()
        _read_whole(path, made, only)
    return _finished(made, path)


def _read_whole(path: str | Path, made: list[ReportBuilder], only: Sequence[str] | None) -> None:
    """Fold ``path`` loaded whole (``load``) into fresh builders: the file cannot be folded as it comes."""
    whole = load(path)
    wanted = set(only) if only is not None else None
    for builder in made:
        builder.headers.extend(whole.headers)
        builder._choose(builder._pick(whole.header))  # the last header's protocol, or none: nothing to wait for
        for s in whole.sessions.values():
            if wanted is None or s.session_id in wanted:
                builder._settle(s, next(builder._order))
    del whole
    for record in iter_records(path):  # every attempt's model calls, as the streamed report counts them
        if isinstance(record, ModelCall) and (wanted is None or record.session_id in wanted):
            for builder in made:
                builder._tally(record)


def _finished(made: list[ReportBuilder], path: str | Path) -> tuple[Report, ReportBuilder]:
    """The first builder's report and the builder; the others finished too (their folds' ``finish`` is what they
    are for), their reports dropped."""
    report = made[0].report(path=str(path))
    for other in made[1:]:
        other.report(path=str(path))
    return report, made[0]
