"""The cyclic collector while a run's sessions run: start-up's objects frozen and a first-generation threshold of
``RUN_GC_THRESHOLD`` (the sessions make almost no cyclic garbage, and each pass traversed their live objects);
both put back when the run ends, also when it fails."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from tests.chaos.protocol import Chaos, Question
from tests.core.test_workers import items, script
from voirdire.executors import RUN_GC_THRESHOLD
from voirdire.runner import run_protocol
from voirdire.session import Session
from voirdire.transcript import Verdict


class Stop(BaseException):
    """Not a session's error: it ends the run."""


class Watching(Chaos):
    """The chaos protocol, noting the collector's settings each session ran under."""

    def __init__(self, fail: bool = False) -> None:
        super().__init__()
        self.fail = fail
        self.seen: list[tuple[tuple[int, int, int], int]] = []

    async def run(self, item: Question, session: Session) -> Verdict:
        self.seen.append((gc.get_threshold(), gc.get_freeze_count()))
        if self.fail:
            raise Stop
        return await super().run(item, session)


@pytest.fixture
def thresholds() -> tuple[int, int, int]:
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield gc.get_threshold()
    gc.set_threshold(*before)


async def test_the_run_raises_the_threshold_and_freezes_then_puts_both_back(
    tmp_path: Path, thresholds: tuple[int, int, int]
) -> None:
    frozen = gc.get_freeze_count()
    protocol = Watching()
    result = await run_protocol(protocol, items(4), out=tmp_path / "t.jsonl", roles=script(tmp_path), progress=False)
    assert len(result.verdicts) == 4 and not result.errors
    assert {t for t, _ in protocol.seen} == {(RUN_GC_THRESHOLD, 10, 10)}
    assert all(count > frozen for _, count in protocol.seen)
    assert gc.get_threshold() == thresholds and gc.get_freeze_count() == frozen


async def test_a_run_that_stops_puts_the_collector_back(tmp_path: Path, thresholds: tuple[int, int, int]) -> None:
    frozen = gc.get_freeze_count()
    with pytest.raises(Stop):
        await run_protocol(Watching(fail=True), items(2), out=tmp_path / "t.jsonl", roles=script(tmp_path),
                           progress=False)  # fmt: skip
    assert gc.get_threshold() == thresholds and gc.get_freeze_count() == frozen


async def test_collection_left_off_stays_off(tmp_path: Path) -> None:
    before = gc.get_threshold()
    gc.set_threshold(0)
    try:
        protocol = Watching()
        await run_protocol(protocol, items(2), out=tmp_path / "t.jsonl", roles=script(tmp_path), progress=False)
        assert {t[0] for t, _ in protocol.seen} == {0}
    finally:
        gc.set_threshold(*before)


async def test_overlapping_runs_put_back_what_the_first_found(
    tmp_path: Path, thresholds: tuple[int, int, int]
) -> None:
    """Two runs of one process at once (a notebook's tasks): whichever ends first, the collector is the run's
    while either runs and the process's own once both ended (each saving what it found left it raised for good)."""
    import asyncio

    first, second = Watching(), Watching()
    await asyncio.gather(
        run_protocol(first, items(2), out=tmp_path / "a.jsonl", roles=script(tmp_path), progress=False),
        run_protocol(second, items(6), out=tmp_path / "b.jsonl", roles=script(tmp_path), progress=False),
    )  # the first to start ends first
    assert len(first.seen) == 2 and len(second.seen) == 6
    assert {t for t, _ in first.seen + second.seen} == {(RUN_GC_THRESHOLD, 10, 10)}
    assert gc.get_threshold() == thresholds


async def test_objects_frozen_before_the_run_stay_frozen(tmp_path: Path, thresholds: tuple[int, int, int]) -> None:
    """A pre-forking server froze its objects: the run neither freezes more nor unfreezes them when it ends."""
    held = [object() for _ in range(10)]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen
        protocol = Watching()
        await run_protocol(protocol, items(2), out=tmp_path / "t.jsonl", roles=script(tmp_path), progress=False)
        assert all(count <= frozen for _, count in protocol.seen)  # frozen ones may die; none was added
        assert gc.get_freeze_count() and held  # still frozen after the run
    finally:
        gc.unfreeze()


def test_what_sessions_import_is_imported_before_workers_fork() -> None:
    """Imported after the fork, each worker imported autogen-agentchat and the HTTP stack again (and read the CA
    bundle): the parent imports them, and builds its TLS context, before it forks."""
    import subprocess
    import sys

    code = (
        "import sys; import voirdire.executors.local as local\n"
        "heavy = ('autogen_agentchat', 'tenacity', 'aiohttp', 'yarl', 'anyio')\n"
        "before = [m for m in heavy if m in sys.modules]\n"
        "local._preload()\n"
        "from voirdire.models import openai\n"
        "print(before, [m for m in heavy if m not in sys.modules], openai.tls_context.cache_info().currsize)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")[0]
    assert out == "[] [] 1"
