"""``--executor ray``: a run's sessions on a Ray cluster, written to the same transcript as a local run.

Made for a cluster whose nodes do not share the driver's files. The driver (the run's process) holds the transcript
lock, resumes, writes the header, and is the only writer: ``--workers N`` actors (``SessionWorker``, one CPU each)
each run ``concurrency`` sessions at a time in their own event loop, buffer each session's records, and return
them when it ends, with its verdict or error, its retries and the actor's endpoint limits; the driver writes them
with the same ``MaskingWriter`` a local run uses (masking them again with its own secrets). A session in flight
when the run is interrupted leaves nothing in the transcript, and runs again on resume. A session on an actor that
dies (its worker process killed, its node lost) is dealt again to a live actor, from its start: nothing of it was
written, so the transcript still has it once; the run warns which actor died and how many sessions ran again.

What each node needs: voirdire and the protocol's package installed, the roles' model specs reachable from there
(a ``scripted:`` or ``local:`` file at the same absolute path; relative paths are made absolute on the driver), and
the API keys the roles read in its environment (keys are never sent through Ray). A ``--cache`` file stays on the
driver: each actor starts from a copy of it, and the replies it adds come back to be appended there.

Ray is imported here only, and only when this executor is chosen: without it, a one-line error says what to install.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import pickle
import socket
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
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
    masked_json,
    pickled,
    start_clients,
)
from voirdire.executors.dealer import Dealer, Died, Ended, Events, Worker
from voirdire.models import ModelPool, RoleSettings
from voirdire.transcript import CachedReply, ResponseCache, RunHeader

INSTALL = "pip install 'voirdire[ray]'"
REACH_S = 5.0  # how long a cluster address may take to accept a connection


def require_ray() -> ModuleType:
    """The ``ray`` module, or a one-line error saying how to install it."""
    try:
        import ray
    except ImportError:
        raise RunSetupError(f"--executor ray: Ray is not installed here; install it with {INSTALL}") from None
    return ray


def _absolute(bound: dict[str, RoleSettings]) -> dict[str, RoleSettings]:
    """Specs naming a file relative to the driver's folder, made absolute: a Ray worker runs in another folder."""
    out = {}
    for role, settings in bound.items():
        spec = settings.spec
        if spec.kind in ("scripted", "local") and spec.path and not Path(spec.path).is_absolute():
            settings = settings.model_copy(update={"model": f"{spec.kind}:{Path(spec.path).resolve()}"})
        out[role] = settings
    return out


class _Buffer:
    """One session's records as JSON lines, masked as a ``MaskingWriter`` would, kept until the session ends."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def write(self, record: Any) -> None:
        self.lines.append(masked_json(record))


class _CollectingCache(ResponseCache):
    """An actor's copy of the driver's cache; the replies it adds are also kept to be sent back."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.added: list[tuple[str, dict[str, Any]]] = []

    def put(self, digest: str, reply: CachedReply) -> None:
        super().put(digest, reply)
        self.added.append((digest, reply.model_dump()))

    def take(self) -> list[tuple[str, dict[str, Any]]]:
        added, self.added = self.added, []
        return added


# What an actor returns for one session: its id, its records, its verdict (JSON, when kept), its error, the retries
# it took, the actor's endpoint limits, and the cache replies it added.
Finished = tuple[str, list[str], str | None, str | None, int, Limits, list[tuple[str, dict[str, Any]]]]


class SessionWorker:
    """A Ray actor (async: its sessions share its event loop) that runs sessions of one run."""

    def __init__(self) -> None:
        self.runner: SessionRunner | None = None
        self.cache: _CollectingCache | None = None

    async def setup(self, paths: list[str], job: bytes, cache: bytes | None) -> str | None:
        """Build the clients; the problem, in one line, when they cannot be built (None when ready). ``cache`` is
        the driver's cache file (sent as an object ref, which Ray resolves to its bytes)."""
        # The driver's import path, in the driver's order, for a protocol importable there (a local instance): a
        # package of the same name installed here (site-packages holds a top-level `tests` of some distributions)
        # must not shadow the driver's. Absent folders are harmless.
        sys.path[:] = [*paths, *(p for p in sys.path if p not in paths)]
        try:
            loaded: SessionJob = pickle.loads(job)
            pool = ModelPool()
            await start_clients(pool, loaded.bound, {})
        except Exception as exc:
            return str(exc) if isinstance(exc, VoirdireError) else f"{type(exc).__name__}: {exc}"
        if cache is not None:
            copy = Path(tempfile.mkdtemp(prefix="voirdire-cache-")) / "cache.jsonl"
            copy.write_bytes(cache)
            self.cache = _CollectingCache(copy)
        self.runner = SessionRunner(loaded, pool, {}, self.cache)
        return None

    async def run(self, sid: str, item: bytes) -> Finished:
        if self.runner is None:
            raise RuntimeError("SessionWorker.run before a successful setup")
        retries = 0

        def count(*_: object) -> None:
            nonlocal retries
            retries += 1

        buffer = _Buffer()
        outcome = await self.runner.run(pickle.loads(item), sid, buffer, on_retry=count)
        kept = outcome.verdict if self.runner.job.options.keep_verdicts else None
        verdict = kept.model_dump_json() if kept is not None else None
        added = self.cache.take() if self.cache is not None else []
        return sid, buffer.lines, verdict, outcome.error, retries, endpoint_limits(), added


async def run_on_ray(
    job: SessionJob,
    pending: Sequence[tuple[BaseModel, str]],
    count: int,
    tally: Tally,
    header: RunHeader,
    *,
    address: str | None,
    replies: ResponseCache | None,
) -> None:
    """Run the ``pending`` sessions on ``count`` Ray actors (``address``: None starts a local instance for this run,
    ``auto`` or an address joins a cluster; an instance this process already started is used as it is)."""
    ray = require_ray()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage report sent anywhere
    started = not ray.is_initialized()
    if started and address not in (None, "auto", "local"):
        _check_reachable(address)  # Ray itself would retry an address where nothing answers for minutes
    if started:
        options: dict[str, Any] = {"address": address, "include_dashboard": False, "log_to_driver": True}
        if address is None:  # a local instance: enough CPUs for the actors, whatever this machine has
            options["num_cpus"] = max(count, os.cpu_count() or 1)
        try:
            ray.init(**options)
        except (ConnectionError, ValueError, RuntimeError) as exc:
            if address is None:
                raise RunSetupError(f"--executor ray: cannot start a local Ray instance ({_first_line(exc)})") from None
            raise RunSetupError(f"--ray-address {address}: cannot join the Ray cluster ({_first_line(exc)})") from None
    actors: list[Any] = []
    try:
        cpus = ray.cluster_resources().get("CPU", 0)
        if cpus < count:
            raise RunSetupError(
                f"--workers {count}: the Ray cluster has {cpus:g} CPUs, and each worker (an actor) takes one"
            )
        remote = ray.remote(num_cpus=1, max_concurrency=job.options.concurrency + 1)(SessionWorker)
        options = dataclasses.replace(job.options, cache=None)  # each actor gets a copy of the driver's file
        sent = pickled(dataclasses.replace(job, bound=_absolute(job.bound), options=options), "Ray actors")
        cache = None  # the driver's cache file, put in Ray's object store once for every actor
        if (path := job.options.cache) is not None:
            cache = ray.put(path.read_bytes() if path.exists() else b"")
        actors = [remote.remote() for _ in range(count)]
        problems = await asyncio.gather(*(_wait(a.setup.remote(list(sys.path), sent, cache)) for a in actors))
        problem = next((p for p in problems if p is not None), None)
        if problem is not None:
            raise RunSetupError(f"a Ray worker cannot start: {problem}")
        with MaskingWriter(job.out) as writer:
            writer.write(header)
            await _deal(ray, job, pending, actors, tally, writer, replies)
    finally:
        for actor in actors:
            with contextlib.suppress(Exception):
                ray.kill(actor)
        if started:
            ray.shutdown()


def _check_reachable(address: str) -> None:
    """A cluster address (``HOST:PORT`` or ``ray://HOST:PORT``) that accepts a connection, else a one-line error."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise RunSetupError(f"--ray-address {address}: expected auto, HOST:PORT or ray://HOST:PORT")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=REACH_S).close()
    except OSError as exc:
        raise RunSetupError(f"--ray-address {address}: nothing answers there ({exc.strerror or exc})") from None


async def _wait(ref: Any) -> Any:
    return await asyncio.wrap_future(ref.future())


class _Actor(Worker):
    """The driver's side of one actor: a session is a remote call, whose end (or the actor's death) is a report
    on the dealer's queue."""

    def __init__(
        self, index: int, handle: Any, ray: ModuleType, events: Events, replies: ResponseCache | None
    ) -> None:
        super().__init__()
        self.index = index
        self.handle = handle
        self.ray = ray
        self.events = events
        self.replies = replies
        self.refs: dict[str, Any] = {}  # the calls in flight, to cancel

    def run(self, sid: str, item: BaseModel) -> None:
        ref = self.handle.run.remote(sid, pickle.dumps(item))
        self.refs[sid] = ref
        asyncio.wrap_future(ref.future()).add_done_callback(lambda future: self._returned(sid, future))

    def _returned(self, sid: str, future: asyncio.Future[Finished]) -> None:
        self.refs.pop(sid, None)
        if future.cancelled():
            return
        try:
            finished = future.result()
        except self.ray.exceptions.RayActorError as exc:  # the actor (or its node) died: the session runs elsewhere
            self.limits = {}
            self.events.put_nowait((self, Died(_first_line(exc), lost=(sid,))))
            return
        except self.ray.exceptions.RayError as exc:
            self.events.put_nowait((self, Ended(sid, None, f"Ray could not run this session: {_first_line(exc)}")))
            return
        _, lines, verdict, error, retries, self.limits, added = finished
        if self.replies is not None:
            for digest, reply in added:
                self.replies.put(digest, CachedReply.model_validate(reply))
        self.events.put_nowait((self, Ended(sid, verdict, error, tuple(lines), retries)))

    def cancel(self) -> None:
        """Interrupted, or an error: what is still running is cancelled (and leaves nothing in the transcript)."""
        for ref in self.refs.values():
            with contextlib.suppress(Exception):
                self.ray.cancel(ref)

    def describe(self) -> str:
        return f"Ray worker {self.index + 1}"


async def _deal(
    ray: ModuleType,
    job: SessionJob,
    pending: Sequence[tuple[BaseModel, str]],
    handles: list[Any],
    tally: Tally,
    writer: MaskingWriter,
    replies: ResponseCache | None,
) -> None:
    """Keep ``concurrency`` sessions in flight on every live actor, and write each one's records as it ends. The
    sessions of an actor that died go to the live ones before any new session."""
    events: Events = asyncio.Queue()
    actors = [_Actor(index, handle, ray, events, replies) for index, handle in enumerate(handles)]

    def write(records: tuple[str, ...], _folded: Any) -> None:  # an actor folds no part: the report reads back
        for line in records:
            writer.write_json(line)

    dealer = Dealer(
        actors,
        iter(pending),
        tally,
        job.options.concurrency,
        write=write,
        orphaned="its Ray worker died, and no other worker is left to run it again",
        nobody_left=lambda _why: "every Ray worker died",
    )
    try:
        await dealer.run(events)
    finally:
        for actor in actors:
            actor.cancel()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
