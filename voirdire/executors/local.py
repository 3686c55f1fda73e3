"""``--workers N``: a run's sessions shared among N processes on this machine, in one transcript.

The run's process (the parent) holds the transcript lock, has resumed the transcript and knows what is left. It is
one of the N: it runs sessions in its own event loop beside its bookkeeping, and starts N - 1 workers, each in a
process group of its own, so a Ctrl-C at the terminal reaches the parent alone, which then stops the workers in
order. A worker is a fork of the parent, made before the parent builds its clients: it has every module imported
and the job built, so it starts in milliseconds instead of spending most of a second of CPU importing autogen and
langchain-core and unpickling the job. The fork leaves the parent's event loop behind (a new one of its own, the
default signal handling) and is made only while the parent runs no other Python thread, whose locks would stay
held in the child, and has not loaded torch, whose OpenMP pool a forked child cannot use; otherwise a worker is a
new interpreter (``python -c``; unlike multiprocessing's spawn it never re-imports the user's ``__main__``) that
receives the job pickled. The job is pickled either way, so a run that works with one way works with the other.
Each worker builds its own clients from the roles' specs and runs ``concurrency`` sessions at a time in its own
event loop, as the parent does. A worker keeps each session's records (masked) until the session ends and sends
them with its end; the parent, the one writer of the transcript, appends them as one write, so a worker killed
mid-session leaves nothing of it in the transcript.

The parent deals sessions out one at a time (over a socket pair per worker, to its own tasks directly), a new one
each time one ends, so the load balances and the parent always knows which sessions each process has in flight.
Running sessions in the parent rather than in one more worker saves that worker's start-up (imports, clients:
most of a second of CPU) and the messages its sessions would cost. Workers report back: a session's end (its
verdict or error), retries, warnings, their endpoint limits. The parent keeps the run's bookkeeping (``Tally``):
the error budget across processes, the progress bar. A worker that dies (kill -9, out of memory) loses only its
sessions in flight, which left nothing in the transcript: the parent runs them again itself, so every session is
in the transcript once, and warns which worker died and how many sessions it ran again.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import gc
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any

from pydantic import BaseModel

from voirdire.base import CannotWrite, VoirdireError
from voirdire.executors.base import (
    Limits,
    MaskingWriter,
    RunSetupError,
    SessionJob,
    SessionRunner,
    Tally,
    endpoint_limits,
    masked_json,
    merge_limits,
    pickled,
    start_clients,
)
from voirdire.models import ModelPool
from voirdire.transcript import ResponseCache, RunHeader, Verdict

Message = tuple[Any, ...]

_WORKER = "from voirdire.executors.local import worker_main; worker_main()"
STOP_WAIT_S = 10.0  # how long stopped workers get to cancel their sessions and close, before they are killed
LIMITS_EVERY_S = 0.5  # how often a worker reports its endpoint limits (when they changed)


def exit_text(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


class _Worker:
    """The parent's side of one worker process."""

    def __init__(self, index: int, proc: subprocess.Popen[bytes] | _Forked, conn: Connection) -> None:
        self.index = index
        self.proc = proc
        self.conn = conn
        self.in_flight: dict[str, BaseModel] = {}  # sessions dealt to it that have not ended, in order
        self.alive = True
        self.finishing = False  # told that no further session comes
        self.limits: Limits = {}

    def send(self, message: Message) -> None:
        with contextlib.suppress(OSError):  # it died: its end of the socket is gone, its reader says "eof"
            self.conn.send(message)

    def describe(self) -> str:
        return f"worker process {self.index + 1} (pid {self.proc.pid})"


class _Here:
    """The parent's own share of the sessions: tasks in its event loop, answering on the same queue as the workers
    (a verdict as it is, not serialised), so that one dealer serves both."""

    def __init__(self, runner: SessionRunner, writer: MaskingWriter, events: Events, keep_verdicts: bool) -> None:
        self.runner = runner
        self.writer = writer
        self.events = events
        self.keep_verdicts = keep_verdicts
        self.in_flight: dict[str, BaseModel] = {}
        self.tasks: set[asyncio.Task[None]] = set()
        self.alive = True
        self.finishing = False

    @property
    def limits(self) -> Limits:
        return endpoint_limits()

    def send(self, message: Message) -> None:
        if message[0] == "run":
            task = asyncio.create_task(self._one(message[1], message[2]))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
        elif message[0] == "finish":
            self.finishing = True
            self.alive = bool(self.in_flight)

    async def _one(self, sid: str, item: BaseModel) -> None:
        try:
            outcome = await self.runner.run(item, sid, self.writer)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.events.put_nowait((self, ("crash", sid, f"{type(exc).__name__}: {exc}")))
            return
        verdict = outcome.verdict if self.keep_verdicts else None
        self.events.put_nowait((self, ("end", sid, verdict, outcome.error)))

    async def cancel(self) -> None:
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)

    def describe(self) -> str:
        return "the run's own process"


Events = asyncio.Queue[tuple["_Worker | _Here", Message]]  # (who, message) as the parent receives them


def _listen(worker: _Worker, loop: asyncio.AbstractEventLoop, events: Events) -> None:
    """Every message the worker sends, onto the parent's event queue as it arrives; "eof" when it is gone. Read
    by the event loop itself (no thread per worker contending for the GIL): a message is one or two writes of the
    worker's, so a read that has begun waits for at most the rest of one message."""
    fd = worker.conn.fileno()

    def readable() -> None:
        try:
            while worker.conn.poll():
                events.put_nowait((worker, worker.conn.recv()))
        except (EOFError, OSError):
            loop.remove_reader(fd)
            events.put_nowait((worker, ("eof",)))
        except Exception as exc:  # a message that does not unpickle: the worker is broken
            events.put_nowait((worker, ("crash", None, f"{type(exc).__name__}: {exc}")))

    loop.add_reader(fd, readable)


class _Forked:
    """A forked worker as the parent sees it: the little of ``subprocess.Popen`` the executor uses."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped by someone else: ended, its status gone
                self.returncode = 0
            else:
                if pid:
                    self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        delay = 0.0005
        while self.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout or 0.0)
            time.sleep(delay)
            delay = min(2 * delay, 0.05)
        return self.returncode  # type: ignore[return-value]  # set by poll

    def kill(self) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)


def _can_fork(threads: Sequence[threading.Thread] | None = None) -> bool:
    """Whether a worker may be a fork of this process (running ``threads``, by default its threads): only while no
    other Python thread runs (a lock one holds would stay held in the child), but for the progress bar's monitor,
    which takes only tqdm's lock, which a worker never uses; and while no OpenMP pool may exist (torch's, which a
    forked child cannot use)."""
    monitor = getattr(sys.modules.get("tqdm._monitor"), "TMonitor", ())
    running = threading.enumerate() if threads is None else threads
    others = [t for t in running if t is not threading.main_thread() and not isinstance(t, monitor)]
    return hasattr(os, "fork") and not others and "torch" not in sys.modules


def _fork(index: int, job: SessionJob, others: Sequence[_Worker]) -> _Worker:
    """A worker forked from this process: it has the run's modules imported and its job built already, so it
    starts in milliseconds where a new interpreter spends most of a second of CPU importing and unpickling."""
    mine, theirs = socket.socketpair()
    for stream in (sys.stdout, sys.stderr):  # what is buffered would be written twice
        with contextlib.suppress(Exception):
            stream.flush()
    frozen = gc.get_freeze_count() == 0
    if frozen:
        gc.freeze()  # the child's collector then leaves the inherited objects (and their pages) alone
    pid = -1
    try:
        with warnings.catch_warnings():  # Python 3.12+ counts native threads too (BLAS pools, fork-safe ones)
            warnings.filterwarnings("ignore", r"This process .* is multi-threaded", DeprecationWarning)
            pid = os.fork()
    except OSError as exc:
        mine.close()
        theirs.close()
        raise RunSetupError(f"cannot start worker processes: {exc.strerror or exc}") from None
    finally:
        if frozen and pid != 0:  # the parent's collector as it was
            gc.unfreeze()
    if pid == 0:  # the worker: it never returns into the parent's event loop
        code = 70
        try:
            mine.close()
            for other in others:  # the parent's ends of the other workers' sockets: theirs see the parent's end
                os.close(other.conn.fileno())
            code = _forked_main(Connection(theirs.detach()), job)
        except BaseException:
            traceback.print_exc()
        finally:
            with contextlib.suppress(Exception):
                sys.stderr.flush()
            os._exit(code)
    theirs.close()
    with contextlib.suppress(OSError):  # also done by the child: whichever runs first, Ctrl-C is the parent's
        os.setpgid(pid, pid)
    return _Worker(index, _Forked(pid), Connection(mine.detach()))


def _forked_main(conn: Connection, job: SessionJob) -> int:
    """A forked worker: its own process group, the default signal handling, stdout sent to stderr (not --json's),
    and an event loop of its own."""
    os.setpgid(0, 0)
    signal.set_wakeup_fd(-1)  # the parent's event loop's, which this process must not wake
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.__stderr__ is not None:
        with contextlib.suppress(OSError, ValueError):
            os.dup2(sys.__stderr__.fileno(), 1)
    asyncio.events._set_running_loop(None)  # the fork's copy of the parent's loop is not this process's
    return asyncio.run(_serve(job, conn))


def _spawn(index: int, setup: Sequence[bytes]) -> _Worker:
    """A worker started as a new interpreter (``python -c``), when this process cannot fork safely."""
    mine, theirs = socket.socketpair()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(theirs.fileno())],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=sys.__stderr__.fileno() if sys.__stderr__ is not None else subprocess.DEVNULL,  # not --json's
            process_group=0,  # Ctrl-C at the terminal is the parent's to handle
        )
    except OSError as exc:
        mine.close()
        raise RunSetupError(f"cannot start worker processes: {exc.strerror or exc}") from None
    finally:
        theirs.close()
    worker = _Worker(index, proc, Connection(mine.detach()))
    for part in setup:
        worker.conn.send_bytes(part)
    return worker


async def run_in_processes(
    job: SessionJob, pending: Sequence[tuple[BaseModel, str]], count: int, tally: Tally, header: RunHeader
) -> None:
    """Run the ``pending`` sessions in ``count`` processes: this one and ``count - 1`` workers; ``header`` is
    written once every process has built its clients (a spec that cannot start fails the run before the
    transcript gets anything)."""
    setup = (pickle.dumps(list(sys.path)), pickled(job, "worker processes"))  # checked where workers fork too
    fork = _can_fork()
    loop = asyncio.get_running_loop()
    events: Events = asyncio.Queue()
    workers: list[_Worker] = []
    pool = ModelPool()
    here: _Here | None = None
    done = False
    try:
        for index in range(1, count):
            worker = _fork(index, job, workers) if fork else _spawn(index, setup)
            workers.append(worker)
            _listen(worker, loop, events)
        await start_clients(pool, job.bound, {})  # while the workers start theirs
        await _until_ready(workers, events)
        with MaskingWriter(job.out) as writer:  # the one writer: workers send their records here
            writer.write(header)
            replies = ResponseCache(job.cache) if job.cache is not None else None
            runner = SessionRunner(job, pool, {}, replies, on_retry=lambda *_: tally.retry())
            here = _Here(runner, writer, events, job.keep_verdicts)
            try:
                await _deal(job, iter(pending), [here, *workers], tally, events)
                done = True
            finally:
                await here.cancel()
    finally:
        for worker in workers:
            loop.remove_reader(worker.conn.fileno())
        _stop(workers, cancel=not done)
        await pool.close()


async def _until_ready(workers: list[_Worker], events: Events) -> None:
    waiting = len(workers)
    while waiting:
        worker, message = await events.get()
        if message[0] == "ready":
            waiting -= 1
        elif message[0] == "failed":
            raise RunSetupError(message[1])
        elif message[0] == "eof":
            code = await _exit_code(worker)
            raise RunSetupError(f"{worker.describe()} ended as it started ({exit_text(code)}); see the errors above")


async def _deal(
    job: SessionJob,
    pending: Any,
    workers: Sequence[_Worker | _Here],
    tally: Tally,
    events: Events,
) -> None:
    """Deal sessions out and take the workers' reports until every worker has ended; write the records of the
    workers' sessions as each ends (the parent's own sessions write theirs)."""
    here = next(w for w in workers if isinstance(w, _Here))
    tally.limits = lambda: merge_limits(w.limits for w in workers)  # an ended worker's last report stays
    exhausted = False

    def deal(worker: _Worker | _Here) -> None:
        nonlocal exhausted
        while worker.alive and not worker.finishing and len(worker.in_flight) < job.concurrency:
            following = None if exhausted else next(pending, None)
            if following is None or not tally.start():
                exhausted = exhausted or following is None
                worker.finishing = True
                worker.send(("finish",))
                return
            item, sid = following
            worker.in_flight[sid] = item
            worker.send(("run", sid, item))

    for worker in workers:
        deal(worker)
    while any(w.alive for w in workers):
        worker, message = await events.get()
        kind = message[0]
        if kind == "end":
            _, sid, verdict, error, *records = message
            if records and records[0]:  # a worker's session: its records, masked there, in one write
                here.writer.write_line(records[0])
            worker.in_flight.pop(sid, None)
            tally.end(sid, _verdict(verdict), error)
            if isinstance(worker, _Here) and worker.finishing and not worker.in_flight:
                worker.alive = False
            if tally.stopped:  # the error budget is spent: no worker gets another session
                for other in workers:
                    deal(other)
            else:
                deal(worker)
        elif kind == "retry":
            tally.retry()
        elif kind == "limits":
            worker.limits = message[1]
            tally.show()
        elif kind == "warning":
            category = getattr(builtins, message[1], None)
            is_warning = isinstance(category, type) and issubclass(category, Warning)
            warnings.warn(message[2], category if is_warning else UserWarning, stacklevel=1)
        elif kind == "crash":  # an exception outside any session: a bug, as it would be in one process
            if message[2].startswith(f"{CannotWrite.__name__}: "):  # a full disk: the same error as in one process
                raise CannotWrite(message[2].partition(": ")[2])
            raise RuntimeError(f"{worker.describe()}: {message[2]}")
        elif kind == "eof" and isinstance(worker, _Worker):
            worker.alive = False
            code = await _exit_code(worker)
            if code != 0:  # its last report of requests in flight no longer holds
                worker.limits = {}
            lost, worker.in_flight = worker.in_flight, {}
            if lost:  # nothing of them was written: this process runs them again (started already: not counted)
                note = (
                    f"{worker.describe()} died ({exit_text(code)}); the {len(lost)} session"
                    f"{'s' * (len(lost) != 1)} it was running {'were' if len(lost) != 1 else 'was'} run again "
                    "in the run's own process"
                )
                tally.result.warnings.append(note)
                warnings.warn(note, RuntimeWarning, stacklevel=1)
                here.alive = True
                for sid, item in lost.items():
                    here.in_flight[sid] = item
                    here.send(("run", sid, item))
            tally.show()
            if not any(w.alive for w in workers) and not exhausted and not tally.stopped:
                if next(pending, None) is None:
                    exhausted = True
                else:  # nobody is left to run the rest: a re-run resumes them (and the dead workers' sessions)
                    tally.stop(f"every worker process died (the last: {exit_text(code)})")


async def _exit_code(worker: _Worker) -> int:
    """A worker's exit status once it ends (its end of the socket is closed: it is ending), polled from the event
    loop: a thread waiting here would outlive the run and keep the next run in this process from forking."""
    delay = 0.001
    while (code := worker.proc.poll()) is None:
        await asyncio.sleep(delay)
        delay = min(2 * delay, 0.05)
    return code


def _verdict(sent: Verdict | str | None) -> Verdict | None:
    """A verdict from the parent's own sessions as it is, a worker's from its JSON."""
    return Verdict.model_validate_json(sent) if isinstance(sent, str) else sent


def _stop(workers: list[_Worker], *, cancel: bool) -> None:
    """Every worker ended: asked to cancel its sessions when the run did not finish (Ctrl-C, an error), given
    ``STOP_WAIT_S`` to close its clients and its transcript, then killed. Runs before the transcript lock is
    released, so no worker outlives the lock."""
    if cancel:
        for worker in workers:
            if worker.proc.poll() is None:
                worker.send(("cancel",))
    deadline = time.monotonic() + STOP_WAIT_S
    for worker in workers:
        try:
            worker.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            worker.proc.kill()
            worker.proc.wait()
        with contextlib.suppress(OSError):
            worker.conn.close()


# ----------------------------------------------------------------------------------------- the worker's side


class _Records:
    """One session's records in a worker, as masked JSON lines, kept until the session ends."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def write(self, record: Any) -> None:
        self.lines.append(masked_json(record))


def worker_main() -> None:
    """A worker process: ``python -c`` with its socket's file descriptor as the only argument."""
    conn = Connection(int(sys.argv[1]))
    sys.path[:] = pickle.loads(conn.recv_bytes())  # the parent's: its protocol's module is importable here too
    try:
        job: SessionJob = pickle.loads(conn.recv_bytes())
    except Exception as exc:
        conn.send(("failed", f"a worker process cannot read the run: {type(exc).__name__}: {exc}"))
        return
    sys.exit(asyncio.run(_serve(job, conn)))


async def _serve(job: SessionJob, conn: Connection) -> int:
    lock = threading.Lock()  # messages come from the loop, and warnings from threads that read long replies

    def send(message: tuple[Any, ...]) -> None:
        with lock, contextlib.suppress(OSError):  # the parent is gone: the inbox says so
            conn.send(message)

    pool = ModelPool()
    try:
        await start_clients(pool, job.bound, {})
    except Exception as exc:
        send(("failed", str(exc) if isinstance(exc, VoirdireError) else f"{type(exc).__name__}: {exc}"))
        return 0
    replies = ResponseCache(job.cache) if job.cache is not None else None
    runner = SessionRunner(job, pool, {}, replies, on_retry=lambda *_: send(("retry",)))
    shown: set[str] = set()

    def forward(message: Warning | str, category: type[Warning], *rest: object, **kw: object) -> None:
        text = str(message)
        if text not in shown:  # the parent shows it (once); the same warning of every session is sent once
            shown.add(text)
            send(("warning", category.__name__, text))

    warnings.showwarning = forward  # type: ignore[assignment]
    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()

    def receive() -> None:
        # Read by the event loop itself: a thread blocked on the socket would take the GIL from the loop for every
        # message. The parent writes one message in one or two writes, so a read that has begun waits little.
        try:
            while conn.poll():
                inbox.put_nowait(conn.recv())
        except (EOFError, OSError):  # the parent is gone (killed): stop as on Ctrl-C
            loop.remove_reader(conn.fileno())
            inbox.put_nowait(("cancel",))

    loop.add_reader(conn.fileno(), receive)
    tasks: set[asyncio.Task[None]] = set()

    async def one(sid: str, item: BaseModel) -> None:
        records = _Records()
        try:
            outcome = await runner.run(item, sid, records)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if not isinstance(exc, VoirdireError):  # a bug: its traceback; a user's error (a full disk) is one line
                traceback.print_exc()  # the parent prints, once
            send(("crash", sid, f"{type(exc).__name__}: {exc}"))
            return
        verdict = outcome.verdict.model_dump_json() if outcome.verdict is not None and job.keep_verdicts else None
        send(("end", sid, verdict, outcome.error, "\n".join(records.lines)))

    async def report_limits() -> None:
        last: Limits = {}
        while True:
            now = endpoint_limits()
            if now != last:
                send(("limits", now))
                last = now
            await asyncio.sleep(LIMITS_EVERY_S)

    def ended(task: asyncio.Task[None]) -> None:
        tasks.discard(task)
        inbox.put_nowait(("idle",))

    reporter = asyncio.create_task(report_limits())
    send(("ready",))
    finishing = False
    try:
        while not (finishing and not tasks):
            message = await inbox.get()
            if message[0] == "run":
                task = asyncio.create_task(one(message[1], message[2]))
                tasks.add(task)
                task.add_done_callback(ended)
            elif message[0] == "finish":
                finishing = True
            elif message[0] == "cancel":
                break
    finally:
        loop.remove_reader(conn.fileno())
        for task in (*tasks, reporter):
            task.cancel()
        await asyncio.gather(*tasks, reporter, return_exceptions=True)
        send(("limits", endpoint_limits()))  # the last word: nothing of this worker's is in flight any more
        await pool.close()
    return 0
