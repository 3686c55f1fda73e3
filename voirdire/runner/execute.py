"""Execute a prepared run: its sessions in this event loop, in worker processes or on Ray actors
(docs/architecture.md, "Executors"), with the run's bookkeeping (``Tally``) and progress bar here."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from pydantic import BaseModel

from voirdire.executors import (
    CostBudget,
    MaskingWriter,
    RunResult,
    SequentialRepeats,
    SessionRunner,
    Tally,
    run_collector,
    start_clients,
)
from voirdire.models import ModelPool
from voirdire.runner.prepare import Prepared
from voirdire.transcript import ResponseCache, observing


async def execute(
    run: Prepared,
    pending: Iterable[tuple[BaseModel, str]],
    result: RunResult,
    *,
    left: int | None = None,
    finished: Mapping[str, str | None] | None = None,
) -> None:
    """Run the ``pending`` (item, session id) pairs of ``run``, in item order, writing the header first; the
    result's verdicts, errors, retries, timing and stop reason are filled in as they come. ``pending`` may be an
    iterator, taken one pair at a time as a slot frees; ``left`` is then how many it holds (a sequence's
    length otherwise). ``finished``: the decisions of the sessions an earlier run finished, which sequential
    repeats (``stop_when_decided``) count."""
    if left is None:
        pending = list(pending)
        left = len(pending)
    opts, job = run.options, run.job
    spend = _cost_budget(run) if opts.max_cost is not None else None
    pool = ModelPool()
    replies = ResponseCache(opts.cache) if opts.cache is not None else None
    # Worker processes for one session are not worth their start; Ray was asked for, so even one runs there.
    in_process = not run.elsewhere or left == 0 or (opts.executor == "local" and left == 1)
    if left and in_process:  # before the header: a model that cannot be built fails the run once, not every
        await start_clients(pool, job.bound, run.clients)  # session (worker processes check theirs before it too)
    budget = opts.max_errors
    allowed = budget.allowed(left) if budget is not None else None
    bar = _progress(left, run.protocol.name) if opts.progress and left > 1 else None
    tally = Tally(
        result, left=left, allowed=allowed, budget=str(budget), bar=bar, keep_verdicts=opts.keep_verdicts, spend=spend
    )
    source: Iterator[tuple[BaseModel, str]] | SequentialRepeats = iter(pending)
    if opts.stop_when_decided:
        source = tally.gate = SequentialRepeats(
            iter(pending), repeats=opts.repeats, decided_at=opts.decided_at, finished=finished
        )
    start = time.perf_counter()
    # The meter observes before the writer opens: a writer takes the path's observers as it opens.
    metering = observing(run.out, spend.observe) if spend is not None else contextlib.nullcontext()
    try:
        if in_process:
            with metering, MaskingWriter(run.out) as writer:
                if left:  # a resume with nothing left to run adds nothing to the transcript, not even a header
                    writer.write(run.header)
                runner = SessionRunner(job, pool, run.clients, replies, on_retry=lambda *_: tally.retry())
                await _run_here(runner, source, tally, writer, min(opts.concurrency, left))
        elif opts.executor == "local":
            from voirdire.executors import run_in_processes

            await run_in_processes(job, list(pending), min(opts.workers, left), tally, run.header)
        else:
            from voirdire.executors import run_on_ray

            await run_on_ray(
                job, list(pending), min(opts.workers, left), tally, run.header, address=opts.ray_address,
                replies=replies,
            )  # fmt: skip
    finally:
        if bar is not None:
            bar.close()
        await pool.close()
    tally.finish()
    result.elapsed_s = round(time.perf_counter() - start, 3)


async def _run_here(
    runner: SessionRunner,
    pending: Iterator[tuple[BaseModel, str]] | SequentialRepeats,
    tally: Tally,
    writer: MaskingWriter,
    slots: int,
) -> None:
    """``slots`` tasks, each taking the next (item, session id) from ``pending`` when its session ends: at most
    ``slots`` sessions exist at a time, however many items there are. Sequential repeats release an item's next
    repeats as its earlier ones end: a task with nothing released waits for a session to end."""

    async def one(item: BaseModel, sid: str) -> bool:
        if not tally.start():
            return False
        outcome = await runner.run(item, sid, writer)
        tally.end(sid, outcome.verdict, outcome.error)
        return True

    async def work() -> None:
        if not isinstance(pending, SequentialRepeats):
            for item, sid in pending:
                if not await one(item, sid):
                    return
            return
        while (taken := pending.take()) is not None:
            if taken is SequentialRepeats.WAIT:
                await pending.changed()
            elif not await one(*taken):
                return

    tasks = [asyncio.create_task(work()) for _ in range(slots)]
    try:
        with run_collector():
            await asyncio.gather(*tasks)
    finally:  # one task failed outside a session (a bug), or the run was cancelled: none is left running
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _cost_budget(run: Prepared) -> CostBudget:
    """``--max-cost``'s meter, priced as the report prices (every role's model has a price: ``prepare`` checked)."""
    from voirdire.reports import load_prices

    assert run.options.max_cost is not None
    return CostBudget(run.options.max_cost, load_prices(run.options.prices), per_session=run.options.session_cost)


def _progress(total: int, desc: str) -> Any:
    from voirdire.runner.progress import progress  # tqdm's bar on a terminal or in a notebook, lines in a log

    return progress(total, desc, sys.stderr)
