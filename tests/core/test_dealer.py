"""The one dealer of sessions, driven by workers in memory: what it deals to whom and when, what it does with each
report, a dead worker's sessions run again once, the error budget. The transports themselves (worker processes, Ray
actors) are exercised end to end by test_workers, test_ray_executor and test_node_loss."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import BaseModel

from voirdire.base import CannotWrite
from voirdire.executors.base import RunResult, Tally
from voirdire.executors.dealer import (
    Crashed,
    Dealer,
    Died,
    Ended,
    Events,
    LimitsNow,
    Retried,
    Warned,
    Worker,
)
from voirdire.transcript import Verdict


class Item(BaseModel):
    n: int


class Fake(Worker):
    """A worker that records what it is dealt and reports only what the test makes it report."""

    def __init__(self, name: str, events: Events, *, rerun: str = "dealt again to the workers left") -> None:
        super().__init__()
        self.name = name
        self.events = events
        self.dealt: list[str] = []
        self.finished = 0
        self.rerun = rerun  # type: ignore[misc]

    def run(self, sid: str, item: BaseModel) -> None:
        self.dealt.append(sid)

    def finish(self) -> None:
        self.finished += 1

    def describe(self) -> str:
        return self.name

    def end(self, sid: str, error: str | None = None, **more: object) -> None:
        verdict = None if error else Verdict(run_id="r", session_id=sid, seq=1, decision="yes").model_dump_json()
        self.events.put_nowait((self, Ended(sid, verdict, error, **more)))  # type: ignore[arg-type]

    def report(self, what: object) -> None:
        self.events.put_nowait((self, what))  # type: ignore[arg-type]


def sessions(count: int) -> list[tuple[BaseModel, str]]:
    return [(Item(n=i), f"s{i}") for i in range(count)]


def tally(left: int, allowed: int | None = None) -> Tally:
    return Tally(RunResult(out=Path("t.jsonl"), run_id="r"), left=left, allowed=allowed, budget=str(allowed), bar=None)


async def step() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_sessions_are_dealt_as_slots_free_and_each_ends_once() -> None:
    events: Events = asyncio.Queue()
    a, b = Fake("a", events), Fake("b", events)
    written: list[tuple[str, ...]] = []
    count = tally(5)
    dealer = Dealer([a, b], iter(sessions(5)), count, 2, write=lambda records, _folded: written.append(records))
    run = asyncio.create_task(dealer.run(events))
    await step()
    assert (a.dealt, b.dealt) == (["s0", "s1"], ["s2", "s3"])  # concurrency 2 each, in order
    b.end("s2", records=('{"line": 1}',), retries=2)
    await step()
    assert b.dealt == ["s2", "s3", "s4"] and a.finished == b.finished == 0  # the freed slot takes the next
    assert written == [('{"line": 1}',)] and count.result.retries == 2
    a.end("s0")
    await step()
    assert a.finished == 1 and a.dealt == ["s0", "s1"]  # nothing left: told so once
    for worker, sid in ((a, "s1"), (b, "s3"), (b, "s4")):
        worker.end(sid)
    await asyncio.wait_for(run, 5)
    assert sorted(count.result.verdicts) == ["s0", "s1", "s2", "s3", "s4"] and count.ended == 5
    assert count.started == 5 and not count.result.warnings


async def test_a_dead_worker_s_sessions_run_again_in_the_rescuer_and_the_run_says_so_at_once() -> None:
    events: Events = asyncio.Queue()
    here = Fake("here", events, rerun="run again in the run's own process")
    worker = Fake("worker 2", events, rerun="run again in the run's own process")
    count = tally(4)
    dealer = Dealer([here, worker], iter(sessions(4)), count, 2, write=lambda *_: None, rescue=here)
    run = asyncio.create_task(dealer.run(events))
    await step()
    with pytest.warns(RuntimeWarning, match=r"worker 2 died \(killed by SIGKILL\); the 2 sessions .* own process"):
        worker.report(Died("killed by SIGKILL"))
        await step()
    assert here.dealt == ["s0", "s1", "s2", "s3"] and count.started == 4  # run again, not counted again
    for sid in ("s0", "s1", "s2", "s3"):
        here.end(sid)
    await asyncio.wait_for(run, 5)
    assert len(count.result.verdicts) == 4 and not count.result.errors
    (note,) = count.result.warnings
    assert "the 2 sessions it was running were run again" in note


async def test_a_lost_session_goes_to_a_live_worker_before_any_new_one_and_is_told_at_the_end() -> None:
    events: Events = asyncio.Queue()
    a, b = Fake("Ray worker 1", events), Fake("Ray worker 2", events)
    count = tally(5)
    dealer = Dealer([a, b], iter(sessions(5)), count, 1, write=lambda *_: None)
    run = asyncio.create_task(dealer.run(events))
    await step()
    b.report(Died("its node was lost", lost=("s1",)))
    await step()
    assert not count.result.warnings  # its other sessions may still end, or be lost: counted at the end
    a.end("s0")
    await step()
    assert a.dealt == ["s0", "s1"]  # the lost session before s2
    with pytest.warns(RuntimeWarning, match=r"Ray worker 2 died \(its node was lost\); the 1 session it was running"):
        for sid in ("s1", "s2", "s3", "s4"):
            a.end(sid)
            await step()
        await asyncio.wait_for(run, 5)
    assert len(count.result.verdicts) == 5 and count.result.stopped is None


async def test_when_every_worker_died_the_lost_sessions_fail_and_the_run_stops() -> None:
    events: Events = asyncio.Queue()
    a = Fake("a", events)
    count = tally(3)
    dealer = Dealer([a], iter(sessions(3)), count, 1, write=lambda *_: None, orphaned="nobody", nobody_left=str.upper)
    run = asyncio.create_task(dealer.run(events))
    await step()
    with pytest.warns(RuntimeWarning):
        a.report(Died("gone", lost=("s0",)))
        await asyncio.wait_for(run, 5)
    assert count.result.errors == {"s0": "nobody"} and count.result.stopped == "GONE"


async def test_a_spent_error_budget_deals_no_further_session_anywhere() -> None:
    events: Events = asyncio.Queue()
    a, b = Fake("a", events), Fake("b", events)
    count = tally(10, allowed=0)
    dealer = Dealer([a, b], iter(sessions(10)), count, 1, write=lambda *_: None)
    run = asyncio.create_task(dealer.run(events))
    await step()
    a.end("s0", error="ValueError: bad")
    await step()
    assert a.dealt == ["s0"] and a.finished == 1 and count.stopped  # b's one slot is busy: told when it frees
    b.end("s1")
    await asyncio.wait_for(run, 5)
    assert b.dealt == ["s1"] and b.finished == 1
    count.finish()
    assert count.result.not_started == 8 and count.started == 2


async def test_reports_of_limits_retries_and_warnings_reach_the_run() -> None:
    events: Events = asyncio.Queue()
    a = Fake("a", events)
    count = tally(1)
    dealer = Dealer([a], iter(sessions(1)), count, 1, write=lambda *_: None)
    run = asyncio.create_task(dealer.run(events))
    a.report(LimitsNow({"m@x": (64, 3)}))
    a.report(Retried(2))
    a.report(Warned("DeprecationWarning", "old"))
    a.report(Warned("NoSuchName", "odd"))
    with pytest.warns(DeprecationWarning, match="old"), pytest.warns(UserWarning, match="odd"):
        await step()
    assert count.limits() == {"m@x": (64, 3)} and count.result.retries == 2
    a.end("s0")
    await asyncio.wait_for(run, 5)


async def test_a_crash_outside_a_session_ends_the_run_with_its_error() -> None:
    events: Events = asyncio.Queue()
    a = Fake("worker 2", events)
    dealer = Dealer([a], iter(sessions(2)), tally(2), 1, write=lambda *_: None)
    a.report(Crashed(None, "CannotWrite: transcript t.jsonl: no space left on the device"))
    with pytest.raises(CannotWrite, match="no space left"):
        await dealer.run(events)
    b = Fake("worker 3", events)
    b.report(Crashed("s0", "KeyError: 'x'"))
    with pytest.raises(RuntimeError, match="worker 3: KeyError"):
        await Dealer([b], iter(sessions(2)), tally(2), 1, write=lambda *_: None).run(events)
