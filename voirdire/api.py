"""The Python API: what the CLI does, callable from scripts."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from autogen_core.models import ChatCompletionClient

from voirdire.datasets import load_items
from voirdire.models import RoleSettings
from voirdire.protocols.cross_examination import (
    ClaimItem,
    CrossExamination,
    CrossExaminationParams,
    Report,
    score,
)
from voirdire.runner import RunResult, default_out, run_protocol
from voirdire.transcript import Transcript, Verdict, load


def _roles(models: Mapping[str, str | RoleSettings] | None) -> dict[str, RoleSettings]:
    return {r: s if isinstance(s, RoleSettings) else RoleSettings(model=s) for r, s in (models or {}).items()}


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
    item = ClaimItem.single(claim, question, answers)
    assert item.id is not None
    out = Path(out) if out else default_out("cross_examination", None)
    result = await run_protocol(
        CrossExamination(CrossExaminationParams(**params)),
        [item],
        out=out,
        roles=_roles(models),
        clients=clients,
        resume=False,
    )
    if item.id in result.errors:
        raise RuntimeError(f"examination failed: {result.errors[item.id]} (transcript: {out})")
    return result.verdicts[item.id]


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
    protocol = CrossExamination(CrossExaminationParams(**params))
    items = load_items(path, protocol.item_from_record, limit=limit)
    result = asyncio.run(
        run_protocol(
            protocol,
            items,
            out=out,
            roles=_roles(models),
            clients=clients,
            concurrency=concurrency,
            dataset=str(path),
        )
    )
    t = load(out)
    return result, score(t.sessions[i.id] for i in items if i.id in t.sessions)


def load_transcript(path: str | Path) -> Transcript:
    return load(path)
