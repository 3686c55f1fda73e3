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

A synchronous call inside a running event loop raises ``AsyncContextError`` naming the async call to ``await``
instead. A transcript that exists is resumed (finished sessions are kept, others run), never replaced, unless
``fresh=True``; one of another run (protocol, dataset, parameters, models) is refused with ``ResumeError``.
Protocols are found through the registry, never imported here.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Coroutine, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from autogen_core.models import ChatCompletionClient
from pydantic import BaseModel

from voirdire.base import VoirdireError
from voirdire.models import RoleSettings
from voirdire.registry import get, load_items
from voirdire.reports import Report
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
from voirdire.transcript import Transcript, load

T = TypeVar("T")
Models = Mapping[str, str | RoleSettings] | None
Clients = Mapping[str, ChatCompletionClient] | None


class AsyncContextError(VoirdireError, RuntimeError):
    """A synchronous API call made inside a running event loop, where it cannot wait for the run."""


class SessionFailed(VoirdireError, RuntimeError):
    """The one session a call ran ended in an error (recorded in the transcript)."""


class RoleError(VoirdireError, ValueError):
    """``models`` or ``clients`` name a role the protocol does not have, or plays by a rule."""


def run_sync(coro: Coroutine[Any, Any, T], name: str) -> T:
    """Run ``coro`` to its end from synchronous code; inside a running event loop, say which call to await."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    coro.close()  # never started: no "was never awaited" warning
    raise AsyncContextError(
        f"voirdire.{name.removeprefix('a')}() cannot run inside a running event loop (Jupyter, async code): "
        f"use `await voirdire.{name}(...)` there"
    )


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


def protocol(name: str, **params: Any) -> Protocol[Any, Any]:
    """A registered protocol with ``params`` (its ``Params`` fields)."""
    cls = get(name).protocol
    return cls(cls.Params(**params))


async def arun(
    name: str | Protocol[Any, Any],
    items: Sequence[BaseModel | Mapping[str, Any]],
    *,
    out: str | Path | None = None,
    models: Models = None,
    clients: Clients = None,
    fresh: bool = False,
    dataset: str | None = None,
    options: RunOptions | None = None,
    **kwargs: Any,
) -> RunResult:
    """Run a protocol (a registered name, or an instance) on ``items`` (items, or records its
    ``item_from_record`` reads), writing the transcript ``out`` (default: under ``transcripts/``).

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
    ready = [it if isinstance(it, BaseModel) else proto.item_from_record(dict(it)) for it in items]
    if fresh:
        run_options["resume"] = False
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


_RUN_ARGUMENTS = frozenset({"models", "clients", "fresh", "options"})  # arun's own keywords besides RunOptions


def _split(kwargs: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``RunOptions`` fields, and the rest (a protocol's parameters)."""
    fields = RunOptions.model_fields
    return {k: v for k, v in kwargs.items() if k in fields}, {k: v for k, v in kwargs.items() if k not in fields}


def run(name: str | Protocol[Any, Any], items: Sequence[BaseModel | Mapping[str, Any]], **kwargs: Any) -> RunResult:
    """Synchronous ``arun`` (in a running event loop: ``await arun(...)``)."""
    return run_sync(arun(name, items, **kwargs), "arun")


async def arun_dataset(
    name: str | Protocol[Any, Any],
    path: str | Path,
    *,
    out: str | Path | None = None,
    limit: int | None = None,
    offset: int = 0,
    **kwargs: Any,
) -> tuple[RunResult, Report]:
    """Run a protocol on the records of a dataset file (JSONL, CSV/TSV or a JSON list) read by its
    ``item_from_record``; returns the run and the protocol's report of the transcript. ``out`` defaults to
    ``transcripts/<protocol>-<file>-<digest>.jsonl`` and is resumed if it exists; ``kwargs`` as for ``arun``."""
    params = {k: v for k, v in kwargs.items() if k not in RunOptions.model_fields and k not in _RUN_ARGUMENTS}
    kwargs = {k: v for k, v in kwargs.items() if k not in params}
    proto = protocol(name, **params) if isinstance(name, str) else name
    items = load_items(path, proto.item_from_record, limit=limit, offset=offset)
    out = Path(out) if out else default_out(proto.name, path, _identity(proto, kwargs.get("models"), None, kwargs))
    result = await arun(proto, items, out=out, dataset=str(path), **kwargs)
    return result, get(proto.name).report(load(out))


def run_dataset(name: str | Protocol[Any, Any], path: str | Path, **kwargs: Any) -> tuple[RunResult, Report]:
    """Synchronous ``arun_dataset`` (in a running event loop: ``await arun_dataset(...)``)."""
    return run_sync(arun_dataset(name, path, **kwargs), "arun_dataset")


def load_transcript(path: str | Path) -> Transcript:
    return load(path)
