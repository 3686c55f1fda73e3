"""The oracle–checker scheme from Python, like ``voirdire.protocols.dcr.check``.

from voirdire.protocols.oracle_checker import check_entities, check_paraphrase
verdict = check_entities("Barack Obama visited Paris.", models={"oracle": "openai:gpt-4o-mini"}, tests=5)
verdict = check_paraphrase(s1, s2, models={"oracle": "openai:gpt-4o-mini"}, phi="and")
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from autogen_core.models import ChatCompletionClient

from voirdire.kit import Verdict
from voirdire.kit.models import RoleSettings

from .items import SentenceItem
from .linearity import LinearityChecker
from .paraphrase import PairItem, ParaphraseChecker

Models = Mapping[str, str | RoleSettings] | None
Clients = Mapping[str, ChatCompletionClient] | None


async def _one(
    name: str, item: Any, models: Models, clients: Clients, out: str | Path | None, **params: Any
) -> Verdict:
    from voirdire.kit.reproduce import default_out
    from voirdire.kit.runs import arun  # the runner: imported by a call, not by the registration

    path = Path(out) if out else default_out(name, None)
    result = await arun(name, [item], out=path, models=models, clients=clients, resume=False, **params)
    sid = result.session_ids[0]
    if sid in result.errors:
        raise RuntimeError(f"{name} failed: {result.errors[sid]} (transcript: {path})")
    return result.verdicts[sid]


async def acheck_entities(
    sentence: str, *, models: Models = None, clients: Clients = None, out: str | Path | None = None, **params: Any
) -> Verdict:
    """The linearity checker on one sentence (``params``: ``LinearityParams`` fields, e.g. ``samples=11``)."""
    return await _one(LinearityChecker.name, SentenceItem(text=sentence), models, clients, out, **params)


async def acheck_paraphrase(
    s1: str, s2: str, *, models: Models = None, clients: Clients = None, out: str | Path | None = None, **params: Any
) -> Verdict:
    """The paraphrase decision with its Yes-prover or No-checker (``params``: ``ParaphraseParams`` fields)."""
    item = PairItem(sentence1=s1, sentence2=s2)
    return await _one(ParaphraseChecker.name, item, models, clients, out, **params)


def check_entities(sentence: str, **kwargs: Any) -> Verdict:
    """Synchronous ``acheck_entities``."""
    return asyncio.run(acheck_entities(sentence, **kwargs))


def check_paraphrase(s1: str, s2: str, **kwargs: Any) -> Verdict:
    """Synchronous ``acheck_paraphrase``."""
    return asyncio.run(acheck_paraphrase(s1, s2, **kwargs))
