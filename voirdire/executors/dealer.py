"""The one dealer of sessions to workers, whatever carries them: worker processes over socket pairs (``local``) or
Ray actors (``ray``).

The dealer deals sessions out one at a time, ``concurrency`` in flight per worker, a new one each time one ends, so
the load balances and it always knows which sessions each worker has in flight. It takes the workers' reports as
typed messages (``Ended``, ``Retried``, ``LimitsNow``, ``Warned``, ``Crashed``, ``Died``) from one queue and keeps
the run's bookkeeping in the ``Tally``: the error budget (once spent, no worker gets another session), retries,
the progress line's endpoint limits, warnings shown once. A worker that dies loses only its sessions in flight,
which left nothing in the transcript (a worker sends a session's records with its end): they run again, either in
one worker named for it (``rescue``: the run's own process, for worker processes) or dealt to the live workers
before any new session (Ray), and the run warns which worker died and how many sessions ran again. Each transport
only turns its wire into these messages and ``Worker.run`` into its wire.
"""

from __future__ import annotations

import asyncio
import builtins
import warnings
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel

from voirdire.base import CannotWrite
from voirdire.executors.base import Limits, Tally, merge_limits
from voirdire.transcript import Verdict

# ------------------------------------------------------------------------- what the dealer says to a worker


@dataclass(frozen=True)
class Run:
    """Run this session."""

    sid: str
    item: BaseModel


@dataclass(frozen=True)
class Finish:
    """No further session comes: end once the ones in flight have."""


@dataclass(frozen=True)
class Cancel:
    """Cancel the sessions in flight and end (Ctrl-C, an error)."""


# ------------------------------------------------------------------------- what a worker reports


@dataclass(frozen=True)
class Ready:
    """The worker built its clients."""


@dataclass(frozen=True)
class Failed:
    """The worker cannot start (``why``, one line)."""

    why: str


@dataclass(frozen=True)
class Ended:
    """A session ended, with its verdict (None when not kept; JSON when it comes from another process) or its
    error, and its records (masked JSON lines) for the dealer to write (empty when written already)."""

    sid: str
    verdict: Verdict | str | None
    error: str | None
    records: tuple[str, ...] = ()
    retries: int = 0
    folded: Any = None  # the session's part of the report, folded by the worker that ran it (``reports`` Folded)


@dataclass(frozen=True)
class Retried:
    """A model call was retried."""

    count: int = 1


@dataclass(frozen=True)
class LimitsNow:
    """The worker's endpoint limits: (adaptive limit, requests in flight) per endpoint."""

    limits: Limits


@dataclass(frozen=True)
class Warned:
    """A warning raised in the worker, shown once by the dealer (``category``: the name of a builtin warning)."""

    category: str
    text: str


@dataclass(frozen=True)
class Crashed:
    """An exception outside any session's error isolation: a bug, or a full disk."""

    sid: str | None
    text: str


@dataclass(frozen=True)
class Died:
    """The worker is gone (``why``); ``lost``: the sessions it lost, None for every one it had in flight."""

    why: str
    lost: tuple[str, ...] | None = None


Report = Ready | Failed | Ended | Retried | LimitsNow | Warned | Crashed | Died


class Worker(ABC):
    """The dealer's side of one worker; a transport says how it runs a session and names it."""

    rerun: ClassVar[str] = "dealt again to the workers left"  # where a dead worker's sessions run again
    until_closed: ClassVar[bool] = False  # a process: done once it has closed, not when its last session has ended

    def __init__(self) -> None:
        self.in_flight: dict[str, BaseModel] = {}  # sessions dealt to it that have not ended, in order
        self.alive = True
        self.finishing = False  # told that no further session comes (it may still run a dead worker's)
        self.limits: Limits = {}

    @abstractmethod
    def run(self, sid: str, item: BaseModel) -> None:
        """Send it session ``sid`` of ``item`` (the transport's own message)."""

    def finish(self) -> None:  # noqa: B027 (a hook: most transports need not be told)
        """No further session comes (a transport whose workers end by themselves says so)."""

    @abstractmethod
    def describe(self) -> str:
        """How warnings name it ("worker process 2 (pid 4711)", "Ray actor 1")."""

    def limits_now(self) -> Limits:
        """Its endpoint limits for the progress line: its last report."""
        return self.limits

    @property
    def done(self) -> bool:
        return not self.in_flight and (not self.alive or (self.finishing and not self.until_closed))


Events = asyncio.Queue[tuple[Worker, Report]]  # (who, what) as the dealer receives them


class Dealer:
    """Deals ``pending`` (item, session id) pairs to ``workers`` and takes their reports until every one is done.

    ``write`` appends a session's records to the transcript; ``rescue``, when given, runs a dead worker's sessions
    (else the live workers do, before any new session); ``orphaned`` is the error of a lost session no worker is
    left to run, ``nobody_left(why)`` why the run stops when every worker died with sessions still to start."""

    def __init__(
        self,
        workers: Sequence[Worker],
        pending: Iterator[tuple[BaseModel, str]],
        tally: Tally,
        concurrency: int,
        *,
        write: Callable[[tuple[str, ...], Any], None],
        rescue: Worker | None = None,
        orphaned: str = "its worker died, and no other worker is left to run it again",
        nobody_left: Callable[[str], str] = lambda why: f"every worker died (the last: {why})",
    ) -> None:
        self.workers = list(workers)
        self.pending = pending
        self.tally = tally
        self.concurrency = concurrency
        self.write = write
        self.rescue = rescue
        self.orphaned = orphaned
        self.nobody_left = nobody_left
        self.exhausted = False
        self.again: deque[tuple[str, BaseModel]] = deque()  # sessions lost with their worker, to run again
        self.lost: dict[int, tuple[int, str]] = {}  # dead worker (its index) -> (sessions it lost, why it died)
        self.noted: set[int] = set()
        self._take: Mapping[type[Any], Callable[[Worker, Any], None]] = {
            Ended: self._ended,
            Retried: lambda _w, m: tally.retry(m.count),
            LimitsNow: self._limits,
            Warned: lambda _w, m: _warn(m),
            Crashed: _crashed,
            Died: self._died,
        }
        tally.limits = lambda: merge_limits(w.limits_now() for w in self.workers)  # a dead worker's last report stays

    async def run(self, events: Events) -> None:
        for worker in self.workers:
            self.deal(worker)
        try:
            while not all(w.done for w in self.workers):
                worker, report = await events.get()
                handle = self._take.get(type(report))
                if handle is not None:  # Ready and Failed belong to the start, before the dealing
                    handle(worker, report)
        finally:
            for index in sorted(self.lost):
                self._note(index)

    def deal(self, worker: Worker) -> None:
        """Fill the worker's free slots: a dead worker's sessions first, then new ones while the run allows."""
        while worker.alive and len(worker.in_flight) < self.concurrency:
            if self.again:  # started already: not counted again
                sid, item = self.again.popleft()
            elif worker.finishing:
                return
            elif (following := self._next()) is None:
                worker.finishing = True
                worker.finish()
                return
            else:
                item, sid = following
            worker.in_flight[sid] = item
            worker.run(sid, item)

    def _next(self) -> tuple[BaseModel, str] | None:
        """The next session to start, None when there is none or the run has stopped (the error budget)."""
        following = None if self.exhausted else next(self.pending, None)
        self.exhausted = self.exhausted or following is None
        if following is None or not self.tally.start():
            return None
        return following

    def _ended(self, worker: Worker, report: Ended) -> None:
        if report.records:  # a worker's session: its records, masked there
            self.write(report.records, report.folded)
        worker.in_flight.pop(report.sid, None)
        if report.retries:
            self.tally.retry(report.retries)
        verdict = Verdict.model_validate_json(report.verdict) if isinstance(report.verdict, str) else report.verdict
        self.tally.end(report.sid, verdict, report.error)
        for other in self.workers if self.tally.stopped else (worker,):  # a spent budget: nobody gets another
            self.deal(other)

    def _limits(self, worker: Worker, report: LimitsNow) -> None:
        worker.limits = report.limits
        self.tally.show()

    def _died(self, worker: Worker, report: Died) -> None:
        worker.alive = False
        sids = tuple(worker.in_flight) if report.lost is None else report.lost
        lost = [(sid, worker.in_flight.pop(sid)) for sid in sids if sid in worker.in_flight]
        index = self.workers.index(worker)
        count, why = self.lost.get(index, (0, report.why))
        if lost:
            self.lost[index] = (count + len(lost), why)
        if report.lost is None:  # its every session at once: the count is final, the run says so now (else at its end)
            self._note(index)
        if self.rescue is not None:
            for sid, item in lost:
                self.rescue.in_flight[sid] = item
                self.rescue.run(sid, item)
        else:
            self.again.extend(lost)
            for other in self.workers:
                self.deal(other)
        self.tally.show()
        if not any(w.alive for w in self.workers):
            self._nobody_left(report.why)

    def _nobody_left(self, why: str) -> None:
        for sid, _item in self.again:  # a re-run resumes them
            self.tally.end(sid, error=self.orphaned)
        self.again.clear()
        if not self.exhausted and not self.tally.stopped:
            if next(self.pending, None) is None:
                self.exhausted = True
            else:  # nobody is left to run the rest: a re-run resumes them
                self.tally.stop(self.nobody_left(why))

    def _note(self, index: int) -> None:
        if index not in self.lost or index in self.noted:
            return
        self.noted.add(index)
        count, why = self.lost[index]
        worker = self.workers[index]
        note = (
            f"{worker.describe()} died ({why}); the {count} session{'s' * (count != 1)} it was running "
            f"{'were' if count != 1 else 'was'} {worker.rerun}"
        )
        self.tally.result.warnings.append(note)
        warnings.warn(note, RuntimeWarning, stacklevel=1)


def _warn(report: Warned) -> None:
    category = getattr(builtins, report.category, None)
    is_warning = isinstance(category, type) and issubclass(category, Warning)
    warnings.warn(report.text, category if is_warning else UserWarning, stacklevel=1)


def _crashed(worker: Worker, report: Crashed) -> None:
    """An exception outside any session: a bug, as it would be in one process; a full disk, the same error."""
    if report.text.startswith(f"{CannotWrite.__name__}: "):
        raise CannotWrite(report.text.partition(": ")[2])
    raise RuntimeError(f"{worker.describe()}: {report.text}")
