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
import warnings
from collections import deque
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
    merge_limits,
    pickled,
    start_clients,
)
from voirdire.models import ModelPool, RoleSettings
from voirdire.transcript import CachedReply, ResponseCache, RunHeader, Verdict

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
        kept = outcome.verdict if self.runner.job.keep_verdicts else None
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
        remote = ray.remote(num_cpus=1, max_concurrency=job.concurrency + 1)(SessionWorker)
        sent = pickled(dataclasses.replace(job, bound=_absolute(job.bound), cache=None), "Ray actors")
        cache = None  # the driver's cache file, put in Ray's object store once for every actor
        if job.cache is not None:
            cache = ray.put(job.cache.read_bytes() if job.cache.exists() else b"")
        actors = [remote.remote() for _ in range(count)]
        problems = await asyncio.gather(*(_wait(a.setup.remote(list(sys.path), sent, cache)) for a in actors))
        problem = next((p for p in problems if p is not None), None)
        if problem is not None:
            raise RunSetupError(f"a Ray worker cannot start: {problem}")
        with MaskingWriter(job.out) as writer:
            writer.write(header)
            await _deal(ray, job, iter(pending), actors, tally, writer, replies)
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


async def _deal(
    ray: ModuleType,
    job: SessionJob,
    pending: Any,
    actors: list[Any],
    tally: Tally,
    writer: MaskingWriter,
    replies: ResponseCache | None,
) -> None:
    """Keep ``concurrency`` sessions in flight on every live actor, and write each one's records as it ends. The
    sessions of an actor that died go to the live ones before any new session."""
    in_flight: dict[asyncio.Future[Any], tuple[int, str, Any, Any]] = {}  # future -> (actor, session id, ref, item)
    again: deque[tuple[Any, str]] = deque()  # sessions lost with their actor, to run again
    lost: dict[int, tuple[int, str]] = {}  # dead actor -> (sessions it lost, why it died)
    live = set(range(len(actors)))
    limits: dict[int, Limits] = {}
    tally.limits = lambda: merge_limits(limits[a] for a in live if a in limits)
    busy = [0] * len(actors)
    exhausted = False

    def deal(actor: int) -> None:
        nonlocal exhausted
        while actor in live and busy[actor] < job.concurrency and (again or not exhausted):
            if again:  # started already: not counted again
                item, sid = again.popleft()
            else:
                following = next(pending, None)
                if following is None or not tally.start():
                    exhausted = True
                    return
                item, sid = following
            ref = actors[actor].run.remote(sid, pickle.dumps(item))
            in_flight[asyncio.wrap_future(ref.future())] = (actor, sid, ref, item)
            busy[actor] += 1

    for actor in range(len(actors)):
        deal(actor)
    try:
        while in_flight:
            done, _ = await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
            for future in done:
                actor, sid, _ref, item = in_flight.pop(future)
                busy[actor] -= 1
                try:
                    finished: Finished = future.result()
                except ray.exceptions.RayActorError as exc:  # the actor (or its node) died: run it elsewhere
                    live.discard(actor)
                    count, why = lost.get(actor, (0, _first_line(exc)))
                    lost[actor] = (count + 1, why)
                    again.append((item, sid))
                    continue
                except ray.exceptions.RayError as exc:
                    tally.end(sid, error=f"Ray could not run this session: {_first_line(exc)}")
                    continue
                _, lines, verdict, error, retries, limits[actor], added = finished
                for line in lines:
                    writer.write_json(line)
                if replies is not None:
                    for digest, reply in added:
                        replies.put(digest, CachedReply.model_validate(reply))
                if retries:
                    tally.retry(retries)
                tally.end(sid, Verdict.model_validate_json(verdict) if verdict is not None else None, error)
            for actor in sorted(live):
                deal(actor)
            if not live:
                for _item, sid in again:  # nobody is left to run them: a re-run resumes them
                    tally.end(sid, error="its Ray worker died, and no other worker is left to run it again")
                again.clear()
                if not exhausted and not tally.stopped:
                    if next(pending, None) is None:
                        exhausted = True
                    else:  # nobody is left to run the rest: a re-run resumes them
                        tally.stop("every Ray worker died")
    finally:  # interrupted, or an error: what is still running is cancelled (and leaves nothing in the transcript)
        for _actor, _sid, ref, _item in in_flight.values():
            with contextlib.suppress(Exception):
                ray.cancel(ref)
        for actor, (count, why) in sorted(lost.items()):
            note = (
                f"Ray worker {actor + 1} died ({why}); the {count} session{'s' * (count != 1)} it was running "
                f"{'were' if count != 1 else 'was'} dealt again to the workers left"
            )
            tally.result.warnings.append(note)
            warnings.warn(note, RuntimeWarning, stacklevel=1)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
