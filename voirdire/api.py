"""The Python API: what the CLI does, callable from scripts and notebooks.

Every entry point has an async form for code that already runs an event loop (Jupyter, an async web app) and a
synchronous one for scripts:

| async (``await`` it) | synchronous | what it runs |
|---|---|---|
| ``arun(name, items, ...)`` | ``run`` | any registered protocol on items (or records) |
| ``arun_dataset(name, path, ...)`` | ``run_dataset`` | any registered protocol on a dataset file, with its report |
| ``aexamine(claim, ...)`` | ``examine`` | one cross-examination; returns its verdict |
| ``aexamine_dataset(path, ...)`` | ``examine_dataset`` | cross-examination of a dataset of questions |

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

from voirdire.datasets import load_items
from voirdire.errors import VoirdireError
from voirdire.models import RoleSettings
from voirdire.protocol import Protocol
from voirdire.registry import get
from voirdire.report import Report
from voirdire.runner import ErrorBudget, RunResult, default_out, role_problem, run_protocol
from voirdire.transcript import Transcript, Verdict, load

EXAMINATION = "cross_examination"
T = TypeVar("T")
Models = Mapping[str, str | RoleSettings] | None
Clients = Mapping[str, ChatCompletionClient] | None


class AsyncContextError(VoirdireError, RuntimeError):
    """A synchronous API call made inside a running event loop, where it cannot wait for the run."""


class SessionFailed(VoirdireError, RuntimeError):
    """The one session a call ran ended in an error (recorded in the transcript)."""


class RoleError(VoirdireError, ValueError):
    """``models`` or ``clients`` name a role the protocol does not have, or plays by a rule."""


def _sync(coro: Coroutine[Any, Any, T], name: str) -> T:
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
            problem = role_problem(proto, role) if role != "*" else None
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
    concurrency: int = 1,
    fresh: bool = False,
    resume: bool = True,
    dataset: str | None = None,
    cache: str | Path | None = None,
    max_errors: int | str | ErrorBudget | None = None,
    workers: int = 1,
    executor: str = "local",
    ray_address: str | None = None,
    keep_verdicts: bool = True,
    coalesce: bool = True,
    **params: Any,
) -> RunResult:
    """Run a protocol (a registered name, or an instance) on ``items`` (items, or records its
    ``item_from_record`` reads), writing the transcript ``out`` (default: under ``transcripts/``).

    An existing ``out`` is resumed: its finished sessions are kept and skipped. ``fresh=True`` (the same as
    ``resume=False``) deletes it first. ``cache`` is a JSONL file of replies to reuse, ``max_errors`` stops the
    run once more sessions failed (``5`` or ``"10%"``). ``workers=N`` runs the sessions in N processes,
    ``executor="ray"`` on Ray actors (``ray_address``: a cluster to join), as ``run_protocol`` says: their roles
    need model specs (``models``), not ``clients``. ``keep_verdicts=False`` leaves ``RunResult.verdicts`` empty
    for runs too big to hold them (the transcript has them); ``coalesce=False`` sends every request, even one
    identical to an earlier deterministic request of its session."""
    proto = protocol(name, **params) if isinstance(name, str) else name
    _check_roles(proto, models, clients)
    ready = [it if isinstance(it, BaseModel) else proto.item_from_record(dict(it)) for it in items]
    return await run_protocol(
        proto,
        ready,
        out=Path(out) if out else default_out(proto.name, dataset),
        roles=_roles(models),
        clients=clients,
        concurrency=concurrency,
        resume=resume and not fresh,
        dataset=dataset,
        cache=cache,
        max_errors=max_errors,
        workers=workers,
        executor=executor,
        ray_address=ray_address,
        keep_verdicts=keep_verdicts,
        coalesce=coalesce,
    )


def run(name: str | Protocol[Any, Any], items: Sequence[BaseModel | Mapping[str, Any]], **kwargs: Any) -> RunResult:
    """Synchronous ``arun`` (in a running event loop: ``await arun(...)``)."""
    return _sync(arun(name, items, **kwargs), "arun")


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
    params = {k: kwargs.pop(k) for k in list(kwargs) if k not in _RUN_OPTIONS}
    proto = protocol(name, **params) if isinstance(name, str) else name
    items = load_items(path, proto.item_from_record, limit=limit, offset=offset)
    out = Path(out) if out else default_out(proto.name, path)
    result = await arun(proto, items, out=out, dataset=str(path), **kwargs)
    return result, get(proto.name).report(load(out))


def run_dataset(name: str | Protocol[Any, Any], path: str | Path, **kwargs: Any) -> tuple[RunResult, Report]:
    """Synchronous ``arun_dataset`` (in a running event loop: ``await arun_dataset(...)``)."""
    return _sync(arun_dataset(name, path, **kwargs), "arun_dataset")


_RUN_OPTIONS = frozenset(
    {
        "models",
        "clients",
        "concurrency",
        "fresh",
        "resume",
        "cache",
        "max_errors",
        "workers",
        "executor",
        "ray_address",
        "keep_verdicts",
        "coalesce",
    }
)


async def aexamine(
    claim: str | None = None,
    *,
    question: str | None = None,
    answers: list[str] | None = None,
    models: Models = None,
    clients: Clients = None,
    out: str | Path | None = None,
    fresh: bool = False,
    **params: Any,
) -> Verdict:
    """Cross-examine one claim (or the claim the examinee makes for ``question``) and return the verdict.

    ``models`` maps roles (``examiner``, ``examinee``, or ``*``) to specs or ``RoleSettings``; ``params`` are
    ``CrossExaminationParams`` fields, e.g. ``examinations=3`` for LMvLM (Majority). The session is added to
    ``out`` when it exists (a claim already examined there returns its verdict); ``fresh=True`` starts it over.
    """
    out = Path(out) if out else default_out(EXAMINATION, None)
    record = {"claim": claim, "question": question, "answers": answers or []}
    result = await arun(
        EXAMINATION,
        [{k: v for k, v in record.items() if v}],
        out=out,
        models=models,
        clients=clients,
        fresh=fresh,
        **params,
    )
    sid = result.session_ids[0]
    if sid in result.errors:
        raise SessionFailed(f"examination failed: {result.errors[sid]} (transcript: {out})")
    return result.verdicts[sid]


def examine(claim: str | None = None, **kwargs: Any) -> Verdict:
    """Synchronous ``aexamine`` (in a running event loop: ``await aexamine(...)``)."""
    return _sync(aexamine(claim, **kwargs), "aexamine")


async def aexamine_dataset(
    path: str | Path,
    *,
    out: str | Path | None = None,
    models: Models = None,
    clients: Clients = None,
    limit: int | None = None,
    offset: int = 0,
    concurrency: int = 1,
    fresh: bool = False,
    **params: Any,
) -> tuple[RunResult, Report]:
    """Cross-examine every question of a JSONL/CSV/JSON dataset; resumes ``out`` if it exists (``fresh=True``
    starts over). ``params`` are ``CrossExaminationParams`` fields."""
    return await arun_dataset(
        protocol(EXAMINATION, **params),
        path,
        out=out,
        limit=limit,
        offset=offset,
        models=models,
        clients=clients,
        concurrency=concurrency,
        fresh=fresh,
    )


def examine_dataset(path: str | Path, **kwargs: Any) -> tuple[RunResult, Report]:
    """Synchronous ``aexamine_dataset`` (in a running event loop: ``await aexamine_dataset(...)``)."""
    return _sync(aexamine_dataset(path, **kwargs), "aexamine_dataset")


def load_transcript(path: str | Path) -> Transcript:
    return load(path)
