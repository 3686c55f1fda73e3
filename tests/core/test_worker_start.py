"""How ``--workers`` starts its workers: forks of the run's process while that is safe (no thread but the progress
bar's monitor, no torch), new interpreters otherwise; either way a run gives one process's verdicts."""

from __future__ import annotations

import io
import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from tqdm import tqdm

from tests.chaos.protocol import Chaos, Question
from tests.core.test_workers import decisions, items, script
from voirdire.executors import local
from voirdire.runner import run_protocol
from voirdire.transcript import Verdict

SET_AT_RUN_TIME: dict[str, str] = {"value": ""}  # a fork of the test's process sees what the test sets here


class Where(Chaos):
    """The chaos protocol, whose verdicts say which process ran the session and what it saw set at run time."""

    async def run(self, item: Question, session: Any) -> Verdict:
        verdict = await super().run(item, session)
        seen = {"pid": os.getpid(), "seen": SET_AT_RUN_TIME["value"]}
        return verdict.model_copy(update={"statistics": {**verdict.statistics, **seen}})


def by_workers(verdicts: dict[str, Verdict]) -> set[str]:
    return {v.statistics["seen"] for v in verdicts.values() if v.statistics["pid"] != os.getpid()}


def without_where(verdicts: dict[str, Verdict]) -> dict[str, Verdict]:
    strip = {"pid", "seen"}
    return {
        sid: v.model_copy(update={"statistics": {k: x for k, x in v.statistics.items() if k not in strip}})
        for sid, v in verdicts.items()
    }


async def test_workers_are_forks_of_the_run_s_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(SET_AT_RUN_TIME, "value", "set at run time")
    roles, qs = script(tmp_path), items(24)
    one = await run_protocol(Chaos(), qs, out=tmp_path / "one.jsonl", roles=roles, concurrency=2)
    three = await run_protocol(Where(), qs, out=tmp_path / "three.jsonl", roles=roles, concurrency=2, workers=3)
    assert by_workers(three.verdicts) == {"set at run time"}  # workers ran sessions, and they are forks
    three.verdicts = without_where(three.verdicts)
    assert decisions(three) == decisions(one) and not three.errors


async def test_where_it_cannot_fork_workers_are_new_interpreters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(SET_AT_RUN_TIME, "value", "set at run time")
    monkeypatch.setattr(local, "_can_fork", lambda: False)
    roles, qs = script(tmp_path), items(24)
    one = await run_protocol(Chaos(), qs, out=tmp_path / "one.jsonl", roles=roles, concurrency=2)
    two = await run_protocol(Where(), qs, out=tmp_path / "two.jsonl", roles=roles, concurrency=2, workers=2)
    assert by_workers(two.verdicts) == {""}  # a new interpreter imports the module afresh
    two.verdicts = without_where(two.verdicts)
    assert decisions(two) == decisions(one) and not two.errors


def test_it_forks_only_while_no_other_thread_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    assert local._can_fork()
    bar = tqdm(total=3, file=io.StringIO())  # its monitor thread takes only tqdm's lock, never a worker's
    try:
        assert any(type(t).__name__ == "TMonitor" for t in threading.enumerate())
        assert local._can_fork()
        release = threading.Event()
        other = threading.Thread(target=release.wait)
        other.start()
        try:
            assert not local._can_fork()
        finally:
            release.set()
            other.join()
    finally:
        bar.close()
    assert local._can_fork()
    monkeypatch.setitem(sys.modules, "torch", object())  # an OpenMP pool may exist
    assert not local._can_fork()
