"""The chaos suite beyond its own protocol: ``dcr``, ``nodata`` (LLM evaluator), ``check-entities``,
``check-paraphrase`` and ``--executor ray`` against the misbehaving server. Every request fault is met at least
once (the first requests get one each), then some 500s at random; every session ends with a verdict or a recorded
error, exactly once, and the run's exit status says which."""

from __future__ import annotations

import importlib.util
import json
import random
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.chaos.server import FAULTS, ChaosServer
from voirdire.cli import main
from voirdire.transcript import SessionStart, load, read_lines

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="the papers' data (../shared) is not here")
FIRST = [f for f in FAULTS if f != "ok"]  # each fault once, in order, on the first requests


def plan(seed: int = 7, rate: float = 0.05) -> Any:
    rng, lock = random.Random(seed), threading.Lock()

    def fault(index: int, body: dict[str, Any]) -> str:
        if index < len(FIRST):
            return FIRST[index]
        with lock:
            return "500" if rng.random() < rate else "ok"

    return fault


def reply(messages: list[dict[str, Any]]) -> str:
    """Something a model could say to any of these prompts; whether it parses is the protocols' business (a parse
    failure is recorded, never lost)."""
    return "1. The sentence is consistent with the reference: yes.\nAnswer: 1"


def run(command: list[str], tmp_path: Path, capsys: Any) -> tuple[int, dict[str, Any], ChaosServer]:
    with ChaosServer(reply, plan(), retry_after="0", hang_s=30) as server:
        code = main(
            [*command, "--out", str(tmp_path / "t.jsonl"), "--model", f"openai-compatible:chaos@{server.url}",
             "--timeout", "1", "--max-retries", "3", "--max-errors", "100%", "--concurrency", "3", "--json",
             "--no-progress"]
        )  # fmt: skip
    return code, json.loads(capsys.readouterr().out), server


def each_session_once(out: Path, payload: dict[str, Any], code: int) -> int:
    """Every session: a verdict or a recorded error, never both, never neither; one start each; the exit status
    by the errors. The number of sessions."""
    t = load(out)
    for s in t.sessions.values():
        assert (s.verdict is None) != (not s.errors), s.session_id
    starts = Counter(r.session_id for r in read_lines(out) if isinstance(r, SessionStart))
    assert set(starts.values()) == {1}
    assert sorted(payload["errors"]) == sorted(sid for sid, s in t.sessions.items() if s.errors)
    assert code == (3 if payload["errors"] else 0)
    return len(t.sessions)


def met_every_fault(server: ChaosServer) -> None:
    assert set(FIRST) <= set(server.faults())


def test_dcr_under_faults(tmp_path: Path, capsys: Any) -> None:
    data = tmp_path / "pairs.jsonl"
    data.write_text(
        "".join(
            json.dumps({"id": f"p{i}", "reference": f"The bridge opened in 19{i:02d}. It has six lanes.",
                        "candidate": f"The bridge opened in 19{i:02d}. It has six lanes."}) + "\n"
            for i in range(10)
        )
    )  # fmt: skip
    code, payload, server = run(["dcr", "--data", str(data), "--rounds", "2"], tmp_path, capsys)
    met_every_fault(server)
    assert each_session_once(tmp_path / "t.jsonl", payload, code) == 10


@needs_shared
def test_nodata_with_an_llm_evaluator_under_faults(tmp_path: Path, capsys: Any) -> None:
    rows = json.loads((SHARED / "no_data_algorithm" / "good_data_test_with_xor.json").read_text())
    data = tmp_path / "small.json"
    data.write_text(json.dumps(rows[:8]))
    command = ["nodata", "--data", str(data), "--rubric", "ip", "--evaluator", "llm", "--seeds", "1", "--rounds", "2"]
    code, payload, server = run(command, tmp_path, capsys)
    met_every_fault(server)
    assert each_session_once(tmp_path / "t.jsonl", payload, code) >= 1


@needs_shared
@pytest.mark.parametrize(
    "command",
    [
        ["check-entities", "--data", "docred", "--limit", "6"],
        ["check-paraphrase", "--data", "msrp", "--limit", "8", "--embedder", "bag-of-words"],
    ],
    ids=["entities", "paraphrase"],
)
def test_check_under_faults(command: list[str], tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, payload, server = run(command, tmp_path, capsys)
    met_every_fault(server)
    assert each_session_once(tmp_path / "t.jsonl", payload, code) == int(command[command.index("--limit") + 1])


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed (voirdire[ray])")
async def test_ray_executor_under_faults(ray_home: Path, tmp_path: Path) -> None:
    from tests.chaos.protocol import Chaos, replies
    from tests.core.test_workers import items
    from voirdire.models import RoleSettings
    from voirdire.runner import run_protocol

    out = tmp_path / "t.jsonl"
    with ChaosServer(replies, plan(), retry_after="0", hang_s=30) as server:
        roles = {"*": RoleSettings(model=f"openai-compatible:chaos@{server.url}", timeout=1, max_retries=3)}
        result = await run_protocol(Chaos(), items(30), out=out, roles=roles, concurrency=3, workers=2, executor="ray")
    met_every_fault(server)
    t = load(out)
    assert len(t.sessions) == 30 and len(result.verdicts) + len(result.errors) == 30
    for s in t.sessions.values():
        assert (s.verdict is None) != (not s.errors), s.session_id
    starts = Counter(r.session_id for r in read_lines(out) if isinstance(r, SessionStart))
    assert set(starts.values()) == {1}
