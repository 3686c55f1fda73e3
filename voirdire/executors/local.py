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
import contextlib
import dataclasses
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
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from typing import Any

from pydantic import BaseModel

from voirdire.base import VoirdireError
from voirdire.executors.base import (
    Limits,
    MaskingWriter,
    RunSetupError,
    SessionJob,
    SessionRunner,
    Tally,
    endpoint_limits,
    masked_line,
    pickled,
    run_collector,
    start_clients,
)
from voirdire.executors.channel import Channel
from voirdire.executors.dealer import (
    Cancel,
    Crashed,
    Dealer,
    Died,
    Ended,
    Events,
    Failed,
    Finish,
    LimitsNow,
    Ready,
    Report,
    Retried,
    Run,
    Warned,
    Worker,
)
from voirdire.models import ModelPool, preload_http
from voirdire.reports import LiveReport
from voirdire.transcript import ResponseCache, RunHeader, observers_of

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


class _Worker(Worker):
    """The parent's side of one worker process: what the dealer says goes over its socket."""

    rerun = "run again in the run's own process"
    until_closed = True

    def __init__(self, index: int, proc: subprocess.Popen[bytes] | _Forked, conn: Connection) -> None:
        super().__init__()
        self.index = index
        self.proc = proc
        self.conn = conn
        self.channel = Channel(conn.fileno(), asyncio.get_running_loop())
        self.watch: asyncio.Task[None] | None = None  # waits for its exit status once its socket closed

    def send(self, message: Run | Finish | Cancel) -> None:
        self.channel.send(message)  # it died: dropped, its end of the socket is gone and its reader says so

    def run(self, sid: str, item: BaseModel) -> None:
        self.send(Run(sid, item))

    def finish(self) -> None:
        self.send(Finish())

    def describe(self) -> str:
        return f"worker process {self.index + 1} (pid {self.proc.pid})"


class _Here(Worker):
    """The parent's own share of the sessions: tasks in its event loop, reporting on the same queue as the workers
    (a verdict as it is, not serialised), so that one dealer serves both. It never dies: it runs again the
    sessions of a worker that did."""

    def __init__(self, runner: SessionRunner, events: Events, keep_verdicts: bool) -> None:
        super().__init__()
        self.runner = runner
        self.writer: MaskingWriter | None = None
        self.events = events
        self.keep_verdicts = keep_verdicts
        self.tasks: set[asyncio.Task[None]] = set()

    def limits_now(self) -> Limits:
        return endpoint_limits()  # this process's limiter, read as the progress line is drawn

    def run(self, sid: str, item: BaseModel) -> None:
        task = asyncio.create_task(self._one(sid, item))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _one(self, sid: str, item: BaseModel) -> None:
        assert self.writer is not None  # given before any session is dealt
        try:
            outcome = await self.runner.run(item, sid, self.writer)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.events.put_nowait((self, Crashed(sid, f"{type(exc).__name__}: {exc}")))
            return
        verdict = outcome.verdict if self.keep_verdicts else None
        self.events.put_nowait((self, Ended(sid, verdict, outcome.error)))

    async def cancel(self) -> None:
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)

    def describe(self) -> str:
        return "the run's own process"


def _listen(worker: _Worker, loop: asyncio.AbstractEventLoop, events: Events) -> None:
    """Every report the worker sends, onto the parent's event queue as it arrives; ``Died`` once it is gone and
    its exit status known. Read by the event loop itself (no thread per worker contending for the GIL), never
    waiting for the rest of a message (``Channel``)."""
    fd = worker.channel.fd

    async def died() -> None:
        code = await _exit_code(worker)
        if code != 0:  # its last report of requests in flight no longer holds
            worker.limits = {}
        events.put_nowait((worker, Died(exit_text(code))))

    def readable() -> None:
        try:
            messages, ended = worker.channel.receive()
        except Exception as exc:  # a message that does not unpickle: the worker is broken
            events.put_nowait((worker, Crashed(None, f"{type(exc).__name__}: {exc}")))
            return
        for message in messages:
            events.put_nowait((worker, message))
        if ended:
            loop.remove_reader(fd)
            worker.watch = loop.create_task(died())

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
                os.close(other.channel.fd)
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


def _preload() -> None:
    """Import, before forking, what every process's sessions import at their first model call: autogen-agentchat's
    agents and messages, tenacity (the agents' retries), the HTTP stack. Imported after the fork, each worker would pay
    for it again."""
    from voirdire.agents import ModelAgent

    preload_http()
    del ModelAgent


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
    if fork:
        _preload()
    try:
        for index in range(1, count):
            worker = _fork(index, job, workers) if fork else _spawn(index, setup)
            workers.append(worker)
            _listen(worker, loop, events)
        await start_clients(pool, job.bound, {})  # while the workers start theirs
        await _until_ready(workers, events)
        with MaskingWriter(job.out) as writer:  # the one writer: workers send their records here
            writer.write(header)
            replies = ResponseCache(job.options.cache) if job.options.cache is not None else None
            runner = SessionRunner(job, pool, {}, replies, on_retry=lambda *_: tally.retry())
            here = _Here(runner, events, job.options.keep_verdicts)
            here.writer = writer  # the parent's own sessions write their records as they go

            def write(records: tuple[str, ...], folded: Any) -> None:
                # A worker's session, masked there, in one write; its part of the report, where the worker folded it.
                writer.write_line("\n".join(records), folded)

            dealer = Dealer([here, *workers], iter(pending), tally, job.options.concurrency, write=write, rescue=here)
            try:
                with run_collector():  # as in one process: the sessions make almost no cyclic garbage
                    await dealer.run(events)
                done = True
            finally:
                await here.cancel()
    finally:
        for worker in workers:
            loop.remove_reader(worker.channel.fd)
        await _stop(workers, cancel=not done)
        await pool.close()


async def _until_ready(workers: list[_Worker], events: Events) -> None:
    waiting = len(workers)
    while waiting:
        worker, report = await events.get()
        if isinstance(report, Ready):
            waiting -= 1
        elif isinstance(report, Failed):
            raise RunSetupError(report.why)
        elif isinstance(report, Died):
            raise RunSetupError(f"{worker.describe()} ended as it started ({report.why}); see the errors above")


async def _exit_code(worker: _Worker) -> int:
    """A worker's exit status once it ends (its end of the socket is closed: it is ending), polled from the event
    loop: a thread waiting here would outlive the run and keep the next run in this process from forking."""
    delay = 0.001
    while (code := worker.proc.poll()) is None:
        await asyncio.sleep(delay)
        delay = min(2 * delay, 0.05)
    return code


async def _stop(workers: list[_Worker], *, cancel: bool) -> None:
    """Every worker ended: asked to cancel its sessions when the run did not finish (Ctrl-C, an error), given
    ``STOP_WAIT_S`` to close its clients and its transcript, then killed. Runs before the transcript lock is
    released, so no worker outlives the lock."""
    for worker in workers:
        if worker.watch is not None:  # its exit status is no longer awaited here
            worker.watch.cancel()
            await asyncio.gather(worker.watch, return_exceptions=True)
        if cancel and worker.proc.poll() is None:
            worker.send(Cancel())
    deadline = time.monotonic() + STOP_WAIT_S
    with contextlib.suppress(asyncio.TimeoutError):  # written before the waits below, which hold the event loop
        await asyncio.wait_for(asyncio.gather(*(w.channel.drain() for w in workers)), STOP_WAIT_S)
    for worker in workers:
        try:
            worker.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            worker.proc.kill()
            worker.proc.wait()
        worker.channel.close()
        with contextlib.suppress(OSError):
            worker.conn.close()


# ----------------------------------------------------------------------------------------- the worker's side


class _Records:
    """One session's records in a worker, as masked JSON lines, kept until the session ends; the records themselves
    too where the worker folds the session's part of the report (``folding``), unless one was masked: the report
    then reads the file back, as it does after a masked record in one process."""

    def __init__(self, folding: bool) -> None:
        self.lines: list[str] = []
        self.objects: list[Any] | None = [] if folding else None

    def write(self, record: Any) -> None:
        line, masked = masked_line(record)
        self.lines.append(line)
        if masked:
            self.objects = None
        elif self.objects is not None:
            self.objects.append(record)

    def folded(self, live: LiveReport | None) -> Any:
        """The session's part of the report (``LiveReport.fold_session``), None where it cannot be folded here."""
        if live is None or not self.objects:
            return None
        try:
            return live.fold_session(self.objects)
        except Exception:  # a fold that fails here fails reading the file back too, where the report says why
            return None


def worker_main() -> None:
    """A worker process: ``python -c`` with its socket's file descriptor as the only argument."""
    conn = Connection(int(sys.argv[1]))
    sys.path[:] = pickle.loads(conn.recv_bytes())  # the parent's: its protocol's module is importable here too
    try:
        job: SessionJob = pickle.loads(conn.recv_bytes())
    except Exception as exc:
        conn.send(Failed(f"a worker process cannot read the run: {type(exc).__name__}: {exc}"))
        return
    sys.exit(asyncio.run(_serve(job, conn)))


async def _serve(job: SessionJob, conn: Connection) -> int:
    # Messages come from the loop, and warnings from threads that read long replies (the channel takes both); the
    # parent gone, they are dropped and the inbox says so.
    channel = Channel(conn.fileno(), asyncio.get_running_loop())
    send = channel.send
    try:
        return await _sessions(job, channel, send)
    finally:
        with contextlib.suppress(asyncio.TimeoutError):  # the last reports written; a parent that stopped reading
            await asyncio.wait_for(channel.drain(), STOP_WAIT_S / 2)  # is stopping this worker anyway
        channel.close()


async def _sessions(job: SessionJob, channel: Channel, send: Callable[[Report], None]) -> int:
    pool = ModelPool()
    try:
        await start_clients(pool, job.bound, {})
    except Exception as exc:
        send(Failed(str(exc) if isinstance(exc, VoirdireError) else f"{type(exc).__name__}: {exc}"))
        return 0
    replies = ResponseCache(job.options.cache) if job.options.cache is not None else None
    runner = SessionRunner(job, pool, {}, replies, on_retry=lambda *_: send(Retried()))
    # A forked worker has the run's live report (a copy): it folds each session's part for the run's process.
    live = [o for o in observers_of(job.out) if isinstance(o, LiveReport)][:1]  # emptied when a part won't pickle
    shown: set[str] = set()

    def forward(message: Warning | str, category: type[Warning], *rest: object, **kw: object) -> None:
        text = str(message)
        if text not in shown:  # the parent shows it (once); the same warning of every session is sent once
            shown.add(text)
            send(Warned(category.__name__, text))

    warnings.showwarning = forward  # type: ignore[assignment]
    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue[Run | Finish | Cancel | None] = asyncio.Queue()  # None: a session ended

    def receive() -> None:
        # Read by the event loop itself: a thread blocked on the socket would take the GIL from the loop for every
        # message; never waiting for the rest of a message (``Channel``).
        messages, ended = channel.receive()
        for message in messages:
            inbox.put_nowait(message)  # type: ignore[arg-type]  # the parent sends these alone
        if ended:  # the parent is gone (killed): stop as on Ctrl-C
            loop.remove_reader(channel.fd)
            inbox.put_nowait(Cancel())

    loop.add_reader(channel.fd, receive)
    tasks: set[asyncio.Task[None]] = set()

    async def one(sid: str, item: BaseModel) -> None:
        records = _Records(folding=bool(live))
        try:
            outcome = await runner.run(item, sid, records)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if not isinstance(exc, VoirdireError):  # a bug: its traceback; a user's error (a full disk) is one line
                traceback.print_exc()  # the parent prints, once
            send(Crashed(sid, f"{type(exc).__name__}: {exc}"))
            return
        kept = outcome.verdict if job.options.keep_verdicts else None
        verdict = kept.model_dump_json() if kept is not None else None
        ended = Ended(sid, verdict, outcome.error, tuple(records.lines))
        folded = records.folded(live[0] if live else None)
        try:
            send(dataclasses.replace(ended, folded=folded) if folded is not None else ended)
        except Exception:
            if folded is None:
                raise
            live.clear()  # a part that does not pickle (a qa value's mappingproxy): the report reads the file back
            send(ended)

    async def report_limits() -> None:
        last: Limits = {}
        while True:
            now = endpoint_limits()
            if now != last:
                send(LimitsNow(now))
                last = now
            await asyncio.sleep(LIMITS_EVERY_S)

    def ended(task: asyncio.Task[None]) -> None:
        tasks.discard(task)
        inbox.put_nowait(None)

    reporter = asyncio.create_task(report_limits())
    send(Ready())
    finishing = False
    try:
        with run_collector():  # as in the parent
            while not (finishing and not tasks):
                message = await inbox.get()
                if isinstance(message, Run):
                    task = asyncio.create_task(one(message.sid, message.item))
                    tasks.add(task)
                    task.add_done_callback(ended)
                elif isinstance(message, Finish):
                    finishing = True
                elif isinstance(message, Cancel):
                    break
    finally:
        loop.remove_reader(channel.fd)
        for task in (*tasks, reporter):
            task.cancel()
        await asyncio.gather(*tasks, reporter, return_exceptions=True)
        send(LimitsNow(endpoint_limits()))  # the last word: nothing of this worker's is in flight any more
        await pool.close()
    return 0
