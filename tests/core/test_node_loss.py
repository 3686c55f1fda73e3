"""Losing a node mid-run: on a two-node Ray cluster (``ray.cluster_utils.Cluster``, both nodes on this machine) the
node running one of the two actors is removed, or one actor's worker process killed, while sessions run. Its sessions
are dealt again to the actor left: the run ends with every session's verdict, each exactly once in the transcript,
and says which worker died and how many sessions ran again."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from tests.chaos.protocol import Question
from tests.core.test_workers import Slow, script, verdicts_per_session
from voirdire.runner import run_protocol
from voirdire.transcript import load

pytestmark = pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed (voirdire[ray])")

SESSIONS = 40


@pytest.fixture
def cluster(ray_home: Path) -> Any:
    """A head node and a worker node of one CPU each, and this process connected to them: each of a run's two
    actors (one CPU each) lands on its own node."""
    import ray
    from ray.cluster_utils import Cluster

    two = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    worker = two.add_node(num_cpus=1)
    two.wait_for_nodes()
    ray.init(address=two.address, log_to_driver=False)
    yield two, worker
    ray.shutdown()
    two.shutdown()


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def actor_pids() -> list[int]:
    """The processes of this test's actors (``ray::SessionWorker``), on either node: descendants of this process
    (its cluster's raylets started them), never another test run's."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            pid = int(entry)
            if cmdline.startswith(b"ray::SessionWorker"):
                ancestor = _parent(pid)
                while ancestor > 1 and ancestor != os.getpid():
                    ancestor = _parent(ancestor)
                if ancestor == os.getpid():
                    found.append(pid)
    return found


async def run_and_lose(tmp_path: Path, lose: Any) -> tuple[Any, Path]:
    roles, out = script(tmp_path), tmp_path / "ray.jsonl"
    slow = [Question(id=f"s{i:03d}", question=f"Slow {i}?") for i in range(SESSIONS)]
    run = asyncio.create_task(
        run_protocol(Slow(), slow, out=out, roles=roles, workers=2, concurrency=2, executor="ray")  # 0.2 s a session
    )
    while not out.exists() or verdicts_per_session(out).total() < 4:  # mid-run: some sessions done, most not
        await asyncio.sleep(0.05)
        assert not run.done(), run.exception()
    await asyncio.to_thread(lose)
    with pytest.warns(RuntimeWarning, match=r"Ray worker \d died .*dealt again"):
        result = await run
    return result, out


def check(result: Any, out: Path) -> None:
    assert not result.errors and result.stopped is None and len(result.verdicts) == SESSIONS  # 0 lost
    per_session = verdicts_per_session(out)
    assert len(per_session) == SESSIONS and set(per_session.values()) == {1}  # 0 duplicated
    assert len(load(out).finished()) == SESSIONS
    (note,) = result.warnings
    print(note)
    again = int(note.split("; the ")[1].split(" session")[0])
    assert 1 <= again <= 2  # what the dead actor had in flight (concurrency 2)


async def test_a_node_lost_mid_run_loses_and_duplicates_no_session(cluster: Any, tmp_path: Path) -> None:
    two, worker = cluster
    result, out = await run_and_lose(tmp_path, lambda: two.remove_node(worker))
    check(result, out)


async def test_an_actor_process_killed_mid_run_loses_and_duplicates_no_session(cluster: Any, tmp_path: Path) -> None:
    def kill() -> None:
        pids = actor_pids()
        assert len(pids) == 2
        os.kill(pids[-1], signal.SIGKILL)

    result, out = await run_and_lose(tmp_path, kill)
    check(result, out)
