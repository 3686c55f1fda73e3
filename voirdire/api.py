"""The Python API: what the CLI does, callable from scripts and notebooks.

Every entry point has an async form for code that already runs an event loop (Jupyter, an async web app) and a
synchronous one for scripts:

| async (``await`` it) | synchronous | what it runs |
|---|---|---|
| ``arun(name, items, ...)`` | ``run`` | any registered protocol on items (or records) |
| ``arun_dataset(name, path, ...)`` | ``run_dataset`` | any registered protocol on a dataset file, with its report |

A protocol package adds its own calls beside these (``Registration.api``): cross-examination's ``examine`` and
``examine_dataset`` (with ``aexamine``, ``aexamine_dataset``) are ``voirdire.examine`` and so on. How a run runs
is a ``voirdire.runner.RunOptions``: given whole (``options=``), or its fields as keywords.

A synchronous call inside a running event loop (a Jupyter cell) runs the coroutine on a private event loop in a
worker thread and waits for it, so ``voirdire.examine(...)`` works in a notebook as in a script; the async forms
stay for code that must not block its loop. In a notebook a run shows a progress bar (``tqdm.auto``).
``load(path)`` reads a transcript back with its DataFrames (``sessions_frame()``, ``turns_frame()``,
``verdicts_frame()``; ``voirdire.transcript.frames``), costs priced by the reports' price table. Datasets may be
files, folders written by ``datasets``' ``save_to_disk``, ``hf://owner/name``, a ``pandas.DataFrame`` or a
``datasets.Dataset`` (``fields=`` maps item fields to columns).

A transcript that exists is resumed (finished sessions are kept, others run), never replaced, unless
``fresh=True``; one of another run (protocol, dataset, parameters, models) is refused with ``ResumeError``. A
one-off item (a single claim) gets a session id of its own in it (``one_off_id``): calls append to one transcript.
Protocols are found through the registry, never imported here.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import warnings
from collections.abc import Coroutine, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from autogen_core.models import ChatCompletionClient
from pydantic import BaseModel

from voirdire.base import VoirdireError
from voirdire.models import RoleSettings
from voirdire.registry import get, load_items, read_records, source_name
from voirdire.reports import Prices, Report, load_prices, run_cost
from voirdire.runner import (
    EVERY_ROLE,
    RunOptions,
    RunResult,
    default_out,
    role_problem,
    run_identity,
    run_protocol,
)
from voirdire.session import Protocol
from voirdire.transcript import CostOf, LoadedTranscript, load as read_transcript

T = TypeVar("T")
Models = Mapping[str, str | RoleSettings] | None
Clients = Mapping[str, ChatCompletionClient] | None


class SessionFailed(VoirdireError, RuntimeError):
    """The one session a call ran ended in an error (recorded in the transcript)."""


class RoleError(VoirdireError, ValueError):
    """``models`` or ``clients`` name a role the protocol does not have, or plays by a rule."""


def run_sync(coro: Coroutine[Any, Any, T], name: str) -> T:
    """Run ``coro`` to its end from synchronous code. Inside a running event loop (a Jupyter cell, async code),
    where ``asyncio.run`` cannot start another, it runs on a private loop in a worker thread while this thread
    waits: the caller's loop is blocked for that time, as by any synchronous call (``await voirdire.<name>(...)``
    does not block it)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        running = False
    else:
        running = True
    if not running:  # outside the except block: an error of the run must not carry "no running event loop"
        return asyncio.run(coro)
    started: list[tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]]] = []
    stop: list[bool] = []  # set before ``started`` is read, as ``started`` before ``stop`` is: one sees the other

    ended = threading.Event()

    async def watched() -> T:
        task = asyncio.current_task()
        assert task is not None  # a coroutine run by asyncio.run is a task
        started.append((asyncio.get_running_loop(), task))
        try:
            if stop:
                coro.close()
                raise asyncio.CancelledError
            return await coro
        finally:
            ended.set()

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"voirdire-{name}") as worker:
        try:  # an interrupt may come while the worker starts, as well as while it runs
            return worker.submit(asyncio.run, watched()).result()
        except KeyboardInterrupt:  # Jupyter's interrupt reaches this thread: the run stops too, as it would here
            stop.append(True)
            for loop, task in started:
                loop.call_soon_threadsafe(task.cancel)
            if started:  # the cancelled run ends (its transcript closed) before the interrupt is given back
                ended.wait()
            raise


def in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel (IPython's kernel shell), where a run shows a progress bar."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None  # type: ignore[attr-defined]
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def _roles(models: Models) -> dict[str, RoleSettings]:
    return {r: s if isinstance(s, RoleSettings) else RoleSettings(model=s) for r, s in (models or {}).items()}


def _check_roles(proto: Protocol[Any, Any], *bindings: Mapping[str, Any] | None) -> None:
    """Roles bound in ``models`` / ``clients`` that the protocol lacks or plays by rule are errors; its own roles
    that this configuration leaves out are warned about."""
    for binding in bindings:
        for role in binding or {}:
            problem = role_problem(proto, role) if role != EVERY_ROLE else None
            if problem and problem[1]:
                raise RoleError(f"models[{role!r}]: {problem[0]}")
            if problem:
                warnings.warn(f"models[{role!r}]: {problem[0]}", UserWarning, stacklevel=4)


def one_off_id(out: str | Path, base: str) -> tuple[str, list[str]]:
    """A session id for a one-off item whose content gives ``base`` (``claim-1a2b3c4d``), new in ``out``: ``base``
    itself, else ``base-2``, ``base-3``, ... when the same content was examined there before; and the ids already
    used for it, oldest first. Every call of a single claim is so a session of its own, appended to one transcript,
    and resuming never takes one claim's session for another's."""
    from voirdire.transcript import SessionStart, iter_records

    path = Path(out)
    used: list[str] = []
    if path.is_file() and path.stat().st_size:
        prefix = f"{base}-"
        seen = dict.fromkeys(
            r.session_id for r in iter_records(path) if isinstance(r, SessionStart)
            and (r.session_id == base or (r.session_id.startswith(prefix) and r.session_id[len(prefix):].isdigit()))
        )  # fmt: skip
        used = sorted(seen, key=lambda sid: 1 if sid == base else int(sid[len(prefix) :]))
    if not used:
        return base, []
    last = used[-1]
    count = 1 if last == base else int(last[len(base) + 1 :])
    return f"{base}-{count + 1}", used


def protocol(name: str, **params: Any) -> Protocol[Any, Any]:
    """A registered protocol with ``params`` (its ``Params`` fields)."""
    cls = get(name).protocol
    return cls(cls.Params(**params))


async def arun(
    name: str | Protocol[Any, Any],
    items: Sequence[BaseModel | Mapping[str, Any]] | Any,
    *,
    out: str | Path | None = None,
    models: Models = None,
    clients: Clients = None,
    fresh: bool = False,
    dataset: str | None = None,
    options: RunOptions | None = None,
    fields: Mapping[str, str] | None = None,
    **kwargs: Any,
) -> RunResult:
    """Run a protocol (a registered name, or an instance) on ``items`` (items, or records its
    ``item_from_record`` reads: a sequence of mappings, a ``pandas.DataFrame`` or a ``datasets.Dataset``, whose
    columns ``fields`` maps to item fields), writing the transcript ``out`` (default: under ``transcripts/``).

    An existing ``out`` is resumed: its finished sessions are kept and skipped. ``fresh=True`` (the same as
    ``resume=False``) deletes it first. ``kwargs`` are ``RunOptions`` fields (``concurrency``, ``cache``: a JSONL
    file of replies to reuse, ``max_errors``: ``5`` or ``"10%"``, ``workers=N`` processes, ``executor="ray"`` and
    ``ray_address``, ``keep_verdicts=False`` for runs too big to hold the verdicts, ``coalesce=False``; see
    ``run_protocol``; sessions in other processes need model specs in ``models``, not ``clients``), overriding
    ``options``, and the protocol's ``Params`` fields when ``name`` is a registered name."""
    run_options, params = _split(kwargs)
    proto = protocol(name, **params) if isinstance(name, str) else name
    if params and not isinstance(name, str):
        raise TypeError(f"unexpected keyword arguments {sorted(params)} (a protocol instance has its parameters)")
    _check_roles(proto, models, clients)
    ready = [it if isinstance(it, BaseModel) else proto.item_from_record(dict(it)) for it in _records(items, fields)]
    if fresh:
        run_options["resume"] = False
    if options is None and "progress" not in run_options and in_notebook():
        run_options["progress"] = True
    return await run_protocol(
        proto,
        ready,
        out=Path(out) if out else default_out(proto.name, dataset, _identity(proto, models, options, run_options)),
        roles=_roles(models),
        clients=clients,
        dataset=dataset,
        options=options,
        **run_options,
    )


def _identity(
    proto: Protocol[Any, Any], models: Models, options: RunOptions | None, given: Mapping[str, Any]
) -> dict[str, Any]:
    """What the default transcript name digests: ``run_identity``, with the repeats asked for."""
    opts = given.get("options", options)
    repeats = given.get("repeats", opts.repeats if isinstance(opts, RunOptions) else 1)
    return run_identity(proto, _roles(models), repeats=repeats)


_RUN_ARGUMENTS = frozenset({"models", "clients", "fresh", "options", "fields"})  # arun's own keywords


def _records(
    items: Iterable[BaseModel | Mapping[str, Any]] | Any, fields: Mapping[str, str] | None
) -> list[BaseModel | Mapping[str, Any]]:
    """Items as given, or the records of a DataFrame or ``datasets.Dataset`` (``fields`` renaming columns)."""
    if isinstance(items, list | tuple) and not fields:
        return list(items)
    if isinstance(items, list | tuple) and any(isinstance(it, BaseModel) for it in items):
        raise TypeError("fields= renames the columns of records, not the fields of items already built")
    return [record for _, record in read_records(items, fields)]


def _split(kwargs: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``RunOptions`` fields, and the rest (a protocol's parameters)."""
    fields = RunOptions.model_fields
    return {k: v for k, v in kwargs.items() if k in fields}, {k: v for k, v in kwargs.items() if k not in fields}


def run(
    name: str | Protocol[Any, Any], items: Sequence[BaseModel | Mapping[str, Any]] | Any, **kwargs: Any
) -> RunResult:
    """Synchronous ``arun`` (a ``RunResult``; in a running event loop it waits in a worker thread)."""
    return run_sync(arun(name, items, **kwargs), "arun")


async def arun_dataset(
    name: str | Protocol[Any, Any],
    path: str | Path | Any,
    *,
    out: str | Path | None = None,
    limit: int | None = None,
    offset: int = 0,
    fields: Mapping[str, str] | None = None,
    **kwargs: Any,
) -> tuple[RunResult, Report]:
    """Run a protocol on the records of a dataset read by its ``item_from_record``: a file (JSONL, CSV/TSV, a
    JSON list, Parquet), a folder ``datasets``' ``save_to_disk`` wrote, ``hf://owner/name``, or a
    ``pandas.DataFrame`` / ``datasets.Dataset``; ``fields`` maps item fields to the columns they are read from.
    Returns the run and the protocol's report of the transcript. ``out`` defaults to
    ``transcripts/<protocol>-<file>-<digest>.jsonl`` (for an object, a timestamped name) and is resumed if it
    exists; ``kwargs`` as for ``arun``."""
    params = {k: v for k, v in kwargs.items() if k not in RunOptions.model_fields and k not in _RUN_ARGUMENTS}
    kwargs = {k: v for k, v in kwargs.items() if k not in params}
    proto = protocol(name, **params) if isinstance(name, str) else name
    items = load_items(path, proto.item_from_record, limit=limit, offset=offset, fields=fields)
    named = source_name(path) if isinstance(path, str | Path) else None
    out = Path(out) if out else default_out(proto.name, named, _identity(proto, kwargs.get("models"), None, kwargs))
    result = await arun(proto, items, out=out, dataset=named, **kwargs)
    reg = get(proto.name)
    return result, (reg.report or reg.fold)(read_transcript(out))


def run_dataset(name: str | Protocol[Any, Any], path: str | Path, **kwargs: Any) -> tuple[RunResult, Report]:
    """Synchronous ``arun_dataset`` (in a running event loop it waits in a worker thread)."""
    return run_sync(arun_dataset(name, path, **kwargs), "arun_dataset")


def cost_of(prices: Prices) -> CostOf:
    """The USD cost of billed usage by ``prices`` (``run_cost``'s one rule); None when a billed model has none."""

    def cost(usage: Mapping[str, tuple[int, int, int]]) -> float | None:
        found = run_cost(usage, prices)
        return None if found.unpriced else found.usd

    return cost


def load(path: str | Path, *, prices: str | Path | Prices | None = None) -> LoadedTranscript:
    """A transcript read back, with ``sessions_frame()``, ``turns_frame()`` and ``verdicts_frame()`` (pandas).
    Costs are priced by the packaged table, ``$VOIRDIRE_PRICES`` and ``prices`` (a price file or table)."""
    table = prices if isinstance(prices, Prices) else load_prices(prices)
    return LoadedTranscript.of(read_transcript(path), cost_of(table))


def load_transcript(path: str | Path, *, prices: str | Path | Prices | None = None) -> LoadedTranscript:
    """``load``'s first name."""
    return load(path, prices=prices)
