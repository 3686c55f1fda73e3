"""Run a protocol over one item or a dataset, in three steps:

1. ``prepare`` (``voirdire.runner.prepare``): every check that can fail before anything is written, the roles
   bound to their models through a ``RoleTable`` (``voirdire.runner.roles``), the run header;
2. ``resume`` (``voirdire.runner.resume``), under the transcript's lock (``voirdire.runner.lock``): the sessions
   the transcript already finished, checked to be this run's;
3. ``execute`` (``voirdire.runner.execute``): the sessions left, here or in other processes, with error isolation.

Everything written to the transcript passes through ``voirdire.base.secrets.mask_secrets`` (``MaskingWriter``). A run
can be given an error budget (``max_errors``: a count, or a share of the sessions it has to run, ``"10%"``): once
more sessions have failed than it allows, no further session starts, the ones in flight finish, and the result
says why it stopped; the transcript stays consistent (sessions not started have no events), so re-running resumes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from voirdire.base import lazy_face

if TYPE_CHECKING:
    from autogen_core.models import ChatCompletionClient
    from pydantic import BaseModel

    from voirdire.executors import (
        MaskingWriter as MaskingWriter,
        RunResult as RunResult,
        RunSetupError as RunSetupError,
    )
    from voirdire.models import RoleSettings
    from voirdire.runner.lock import _same_file as _same_file, exclusive as exclusive
    from voirdire.runner.memory import run_in_memory as run_in_memory
    from voirdire.runner.options import (
        DEFAULT_MAX_ERRORS as DEFAULT_MAX_ERRORS,
        ErrorBudget as ErrorBudget,
        RunOptions as RunOptions,
    )
    from voirdire.runner.prepare import (
        Prepared as Prepared,
        check_writable as check_writable,
        default_out as default_out,
        package_versions as package_versions,
        run_identity as run_identity,
    )
    from voirdire.runner.resume import START_OVER as START_OVER, ResumeError as ResumeError
    from voirdire.runner.roles import (
        EVERY_ROLE as EVERY_ROLE,
        RoleTable as RoleTable,
        bind_roles as bind_roles,
        check_credentials as check_credentials,
        client_label as client_label,
        independence_warnings as independence_warnings,
        known_roles as known_roles,
        model_roles as model_roles,
        role_problem as role_problem,
    )
    from voirdire.session import PromptLibrary, Protocol

# Every name re-exported above (`X as X`) is exported, imported at its first use (voirdire.base.faces).
_face, __dir__, _exports = lazy_face(__name__)
__all__ = [*_exports, "run_protocol"]


def __getattr__(name: str) -> Any:
    return _face("exclusive" if name == "_exclusive" else name)  # ``_exclusive``: the name the chaos tests know


async def run_protocol(
    protocol: Protocol[Any, Any],
    items: Sequence[BaseModel],
    *,
    out: str | Path,
    roles: Mapping[str, RoleSettings] | RoleTable | None = None,
    clients: Mapping[str, ChatCompletionClient] | None = None,
    prompts: PromptLibrary | None = None,
    dataset: str | None = None,
    options: RunOptions | None = None,
    **option_values: Any,
) -> RunResult:
    """Run ``protocol`` on every item, writing one transcript; finished sessions in ``out`` are skipped. How it
    runs is ``options`` (``RunOptions``), or its fields given as keywords, which override it.

    ``clients`` maps a role to a ready ``ChatCompletionClient`` (scripted clients in tests); other roles are
    built from their ``RoleSettings`` spec, with its timeout and retries (the provider's defaults where unset).
    ``cache`` is a JSONL file of replies to deterministic requests. An exception inside one session is recorded as
    an error event for that session and the run goes on; the session has no verdict, so a resumed run retries it.
    ``max_errors`` (see ``ErrorBudget``) stops the run once more sessions have failed than it allows.
    ``keep_verdicts=False`` leaves ``RunResult.verdicts`` empty (the transcript has them): a run of very many
    sessions then holds only the sessions in flight. ``coalesce=False`` sends every request, even one identical to
    an earlier deterministic request of the same session (an endpoint whose greedy replies vary). ``repeats=N``
    examines each item N times, as N sessions ``ITEM@r1`` ... ``ITEM@rN`` with seeds of their own and no reply
    cache (``voirdire.executors.repeats``); the report then says how stable the verdicts are. ``max_cost=USD``
    stops the run, resumably, once its billed cost (priced by ``prices``, a price file over the packaged table)
    and the expected cost of the sessions in flight reach USD (``voirdire.executors.spend``).

    Where sessions run (docs/architecture.md, "Executors"): ``concurrency`` at a time in this event loop; with
    ``workers=N`` in N processes on this machine, ``concurrency`` at a time in each, all appending to ``out``; with
    ``executor="ray"`` in N Ray actors (``ray_address``: None starts a local Ray instance, ``"auto"`` or an
    address joins a cluster) that send each finished session's records back here to be written. Sessions in
    other processes need their roles bound to model specs: clients given in code cannot be sent there.
    """
    from voirdire.executors import RunResult
    from voirdire.runner.execute import execute
    from voirdire.runner.lock import exclusive
    from voirdire.runner.options import RunOptions
    from voirdire.runner.prepare import prepare
    from voirdire.runner.resume import resume

    opts = RunOptions(**{**dict(options or RunOptions()), **option_values})
    run = prepare(
        protocol, items, out=out, roles=roles, clients=clients, prompts=prompts, dataset=dataset, options=opts
    )
    with exclusive(run.out):  # held until the transcript is closed, and every worker process has ended
        # Sequential repeats count the verdicts of the repeats an earlier run finished, kept or not.
        keep = opts.keep_verdicts or opts.stop_when_decided
        done = resume(run.out, run.header, run.sessions(), resume=opts.resume, keep_verdicts=keep)
        result = RunResult(
            out=run.out,
            run_id=run.header.run_id,
            session_ids=run.ids,
            warnings=run.notes,
            verdicts=done.verdicts,
            skipped=len(done.finished),
        )
        # What is left, in item order: (item, session id) pairs, made one at a time as a slot frees (no list of
        # them is built: a run's memory does not grow with its dataset); ``left`` is counted from the ids alone.
        pending = ((item, sid) for sid, item in run.sessions() if sid not in done.finished)
        finished = (
            {sid: v.decision if v is not None else None for sid, v in done.verdicts.items()}
            if opts.stop_when_decided
            else None
        )
        if finished is not None and not opts.keep_verdicts:
            result.verdicts = {}
        await execute(run, pending, result, left=len(run.ids) - len(done.finished), finished=finished)
    return result
