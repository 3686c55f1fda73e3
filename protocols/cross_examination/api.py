"""Cross-examination from Python: one claim, or a dataset of questions. ``voirdire.examine`` and the other names
here are these functions, found through the registration (``Registration.api``).

    import voirdire
    verdict = voirdire.examine("The capital of Eritrea is Asmara.", models={"examiner": "openai:gpt-4o-mini"})
    result, report = voirdire.examine_dataset("qs.jsonl", out="transcripts/qs.jsonl", limit=50)
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from voirdire.kit import Report, Verdict

from .items import ClaimItem
from .protocol import CrossExamination

if TYPE_CHECKING:  # the runner is imported by a call, not by the registration (`voirdire --help` stays light)
    from voirdire.kit.models import Clients, Models
    from voirdire.kit.runs import RunResult


async def aexamine(
    claim: str | None = None,
    *,
    question: str | None = None,
    answers: list[str] | None = None,
    models: Models = None,
    clients: Clients = None,
    out: str | Path | None = None,
    fresh: bool = False,
    cached: bool = False,
    **params: Any,
) -> Verdict:
    """Cross-examine one claim (or the claim the examinee makes for ``question``) and return the verdict.

    ``models`` maps roles (``examiner``, ``examinee``, or ``*``) to specs or ``RoleSettings``; ``params`` are
    ``CrossExaminationParams`` fields, e.g. ``examinations=3`` for LMvLM (Majority). Each call is a session of its
    own, added to ``out`` when it exists: its id comes from the claim's text (``claim-1a2b3c4d``), with a counter
    when the same claim was examined there before (``claim-1a2b3c4d-2``). ``cached=True`` returns the latest
    finished verdict on the same claim in ``out`` instead of examining it again; ``fresh=True`` empties ``out``
    first.
    """
    from voirdire.kit.data import load_outline
    from voirdire.kit.reproduce import default_out
    from voirdire.kit.runs import SessionFailed, arun, one_off_id

    out = Path(out) if out else default_out(CrossExamination.name, None)
    item = ClaimItem.single(claim, question, answers)  # its id: the claim's text digested
    sid, earlier = one_off_id(out, item.id or "claim") if not fresh else (item.id or "claim", [])
    if cached and earlier:
        sessions = load_outline(out).sessions
        given = item.model_dump(mode="json", exclude={"id"})
        for old in reversed(earlier):
            s = sessions.get(old)
            if s is not None and s.verdict is not None and {k: v for k, v in s.item.items() if k != "id"} == given:
                return s.verdict
    result = await arun(
        CrossExamination.name,
        [item.model_copy(update={"id": sid})],
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
    """Synchronous ``aexamine`` (in a running event loop it waits in a worker thread)."""
    from voirdire.kit.runs import run_sync

    return run_sync(aexamine(claim, **kwargs), "aexamine")


async def aexamine_dataset(
    path: str | Path | Any,
    *,
    out: str | Path | None = None,
    models: Models = None,
    clients: Clients = None,
    limit: int | None = None,
    offset: int = 0,
    concurrency: int = 1,
    fresh: bool = False,
    fields: dict[str, str] | None = None,
    **params: Any,
) -> tuple[RunResult, Report]:
    """Cross-examine every question of a dataset (JSONL, CSV, JSON, Parquet, a ``datasets`` folder, a DataFrame
    or a ``datasets.Dataset``; ``fields`` maps item fields to columns); resumes ``out`` if it exists
    (``fresh=True`` starts over). ``params`` are ``CrossExaminationParams`` fields."""
    from voirdire.kit.runs import arun_dataset, protocol

    return await arun_dataset(
        protocol(CrossExamination.name, **params),
        path,
        out=out,
        limit=limit,
        offset=offset,
        models=models,
        clients=clients,
        concurrency=concurrency,
        fresh=fresh,
        fields=fields,
    )


def examine_dataset(path: str | Path | Any, **kwargs: Any) -> tuple[RunResult, Report]:
    """Synchronous ``aexamine_dataset`` (in a running event loop it waits in a worker thread)."""
    from voirdire.kit.runs import run_sync

    return run_sync(aexamine_dataset(path, **kwargs), "aexamine_dataset")


API = {f.__name__: f for f in (examine, aexamine, examine_dataset, aexamine_dataset)}
