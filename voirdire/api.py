"""The Python API: what the CLI does, callable from scripts and notebooks.

``arun`` / ``run`` run any registered protocol by name; ``aexamine`` / ``examine`` and ``examine_dataset`` are the
cross-examination shortcuts. Protocols are found through the registry, never imported here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from autogen_core.models import ChatCompletionClient
from pydantic import BaseModel

from voirdire.datasets import load_items
from voirdire.models import RoleSettings
from voirdire.protocol import Protocol
from voirdire.registry import get
from voirdire.report import Report
from voirdire.runner import RunResult, default_out, run_protocol
from voirdire.transcript import Transcript, Verdict, load

EXAMINATION = "cross_examination"


def _roles(models: Mapping[str, str | RoleSettings] | None) -> dict[str, RoleSettings]:
    return {r: s if isinstance(s, RoleSettings) else RoleSettings(model=s) for r, s in (models or {}).items()}


def protocol(name: str, **params: Any) -> Protocol[Any, Any]:
    """A registered protocol with ``params`` (its ``Params`` fields)."""
    cls = get(name).protocol
    return cls(cls.Params(**params))


async def arun(
    name: str | Protocol[Any, Any],
    items: Sequence[BaseModel | Mapping[str, Any]],
    *,
    out: str | Path | None = None,
    models: Mapping[str, str | RoleSettings] | None = None,
    clients: Mapping[str, ChatCompletionClient] | None = None,
    concurrency: int = 1,
    resume: bool = True,
    dataset: str | None = None,
    **params: Any,
) -> RunResult:
    """Run a protocol (a registered name, or an instance) on ``items`` (items, or records its
    ``item_from_record`` reads), writing the transcript ``out``."""
    proto = protocol(name, **params) if isinstance(name, str) else name
    ready = [it if isinstance(it, BaseModel) else proto.item_from_record(dict(it)) for it in items]
    return await run_protocol(
        proto,
        ready,
        out=Path(out) if out else default_out(proto.name, dataset),
        roles=_roles(models),
        clients=clients,
        concurrency=concurrency,
        resume=resume,
        dataset=dataset,
    )


def run(name: str | Protocol[Any, Any], items: Sequence[BaseModel | Mapping[str, Any]], **kwargs: Any) -> RunResult:
    """Synchronous ``arun``."""
    return asyncio.run(arun(name, items, **kwargs))


async def aexamine(
    claim: str | None = None,
    *,
    question: str | None = None,
    answers: list[str] | None = None,
    models: Mapping[str, str | RoleSettings] | None = None,
    clients: Mapping[str, ChatCompletionClient] | None = None,
    out: str | Path | None = None,
    **params: Any,
) -> Verdict:
    """Cross-examine one claim (or the claim the examinee makes for ``question``) and return the verdict.

    ``models`` maps roles (``examiner``, ``examinee``, or ``*``) to specs or ``RoleSettings``; ``params`` are
    ``CrossExaminationParams`` fields, e.g. ``examinations=3`` for LMvLM (Majority).
    """
    out = Path(out) if out else default_out(EXAMINATION, None)
    record = {"claim": claim, "question": question, "answers": answers or []}
    result = await arun(
        EXAMINATION,
        [{k: v for k, v in record.items() if v}],
        out=out,
        models=models,
        clients=clients,
        resume=False,
        **params,
    )
    sid = result.session_ids[0]
    if sid in result.errors:
        raise RuntimeError(f"examination failed: {result.errors[sid]} (transcript: {out})")
    return result.verdicts[sid]


def examine(claim: str | None = None, **kwargs: Any) -> Verdict:
    """Synchronous ``aexamine``."""
    return asyncio.run(aexamine(claim, **kwargs))


def examine_dataset(
    path: str | Path,
    *,
    out: str | Path,
    models: Mapping[str, str | RoleSettings] | None = None,
    clients: Mapping[str, ChatCompletionClient] | None = None,
    limit: int | None = None,
    concurrency: int = 1,
    **params: Any,
) -> tuple[RunResult, Report]:
    """Cross-examine every question of a JSONL/CSV dataset; resumes ``out`` if it exists."""
    reg = get(EXAMINATION)
    proto = protocol(EXAMINATION, **params)
    items = load_items(path, proto.item_from_record, limit=limit)
    result = run(proto, items, out=out, models=models, clients=clients, concurrency=concurrency, dataset=str(path))
    return result, reg.report(load(out))


def load_transcript(path: str | Path) -> Transcript:
    return load(path)
