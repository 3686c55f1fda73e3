"""How ``--workers`` starts its workers: forks of the run's process while that is safe (no thread but the progress
bar's monitor, no torch), new interpreters otherwise; either way a run gives one process's verdicts."""

from __future__ import annotations

import io
import json
import os
import subprocess
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
    monkeypatch.setattr(local, "_can_fork", lambda: True)  # as in a run's process (pytest may leave idle threads)
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
    monkeypatch.delitem(sys.modules, "torch", raising=False)  # an earlier test of this process may have loaded it
    main = threading.main_thread()
    assert local._can_fork([main])
    bar = tqdm(total=3, file=io.StringIO())  # its monitor thread takes only tqdm's lock, never a worker's
    try:
        monitors = [t for t in threading.enumerate() if type(t).__name__ == "TMonitor"]
        assert monitors and local._can_fork([main, *monitors])
        assert not local._can_fork([main, *monitors, threading.Thread(target=print)])
    finally:
        bar.close()
    monkeypatch.setitem(sys.modules, "torch", object())  # an OpenMP pool may exist
    assert not local._can_fork([main])


RUN_TWICE = """
import asyncio, json, sys, tempfile
from pathlib import Path
from tests.core.test_worker_start import SET_AT_RUN_TIME, Where, by_workers
from tests.core.test_workers import items, script
from voirdire.runner import run_protocol

async def main() -> None:
    SET_AT_RUN_TIME["value"] = "set at run time"
    folder, seen = Path(sys.argv[1]), []
    for n in range(2):
        result = await run_protocol(
            Where(), items(12), out=folder / f"t{n}.jsonl", roles=script(folder), workers=2, concurrency=2,
            progress=True,
        )
        seen.append(sorted(by_workers(result.verdicts)))
    print(json.dumps(seen))

asyncio.run(main())
"""


def test_a_run_with_a_progress_bar_forks_and_so_does_the_next(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(repo), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", RUN_TWICE, str(tmp_path)], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [["set at run time"], ["set at run time"]]
