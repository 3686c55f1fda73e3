"""DCR from Python, like ``voirdire.examine`` for cross-examination: one pair, or a benchmark of §4.1.

from voirdire.protocols.dcr import check, check_benchmark
verdict = check(article, summary, models={"*": "openai:gpt-4o-mini"}, rounds=3)
verdict.statistics["score"], verdict.statistics["candidate"]
result, report = check_benchmark("qags-cnn", out="transcripts/qags.jsonl", models={...}, rounds=0, limit=50)
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autogen_core.models import ChatCompletionClient

from voirdire.kit import Verdict
from voirdire.kit.data import load
from voirdire.kit.models import RoleSettings

from .data import load_benchmark
from .items import DCRItem
from .protocol import DCR
from .report import DCRReport, report

if TYPE_CHECKING:  # the runner is imported by a call, not by the registration (`voirdire --help` stays light)
    from voirdire.kit.runs import RunResult

Models = Mapping[str, str | RoleSettings] | None
Clients = Mapping[str, ChatCompletionClient] | None


async def acheck(
    reference: str,
    candidate: str,
    *,
    models: Models = None,
    clients: Clients = None,
    out: str | Path | None = None,
    fresh: bool = False,
    **params: Any,
) -> Verdict:
    """Evaluate ``candidate`` against ``reference`` and improve it (``params``: ``DCRParams`` fields, e.g.
    ``rounds=3``, ``task="semantic"``); the verdict's statistics hold the score, the final candidate and the
    round history. An existing ``out`` is resumed (a pair already checked there returns its verdict);
    ``fresh=True`` starts it over."""
    from voirdire.kit.reproduce import default_out
    from voirdire.kit.runs import arun

    path = Path(out) if out else default_out(DCR.name, None)
    item = DCRItem.single(reference, candidate)
    result = await arun(DCR.name, [item], out=path, models=models, clients=clients, fresh=fresh, **params)
    sid = result.session_ids[0]
    if sid in result.errors:
        raise RuntimeError(f"DCR failed: {result.errors[sid]} (transcript: {path})")
    return result.verdicts[sid]


def check(reference: str, candidate: str, **kwargs: Any) -> Verdict:
    """Synchronous ``acheck``."""
    return asyncio.run(acheck(reference, candidate, **kwargs))


def check_benchmark(
    name: str,
    *,
    out: str | Path,
    models: Models = None,
    clients: Clients = None,
    limit: int | None = None,
    concurrency: int = 1,
    **params: Any,
) -> tuple[RunResult, DCRReport]:
    """Run DCR on a benchmark (``summeval``, ``qags-cnn``, ``qags-xsum``, ``paws``, ``msrp``); resumes ``out``."""
    from voirdire.kit.runs import arun

    items = [e.item for e in load_benchmark(name)[:limit]]
    result = asyncio.run(
        arun(DCR.name, items, out=out, models=models, clients=clients, concurrency=concurrency, dataset=name, **params)
    )
    return result, report(load(out))
