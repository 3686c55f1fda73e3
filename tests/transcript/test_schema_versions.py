"""Schema versions: a repeat's index is a field of its ``session_start`` (version 3); a version-2 transcript, which
kept it only in the session's ``repeat`` step, loads and reports unchanged. ``fixtures/repeats-v2.jsonl`` was
written by the version-2 runner: the chaos protocol, two items, three repeats each, one item's repeats flipping."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.chaos.protocol import Chaos
from tests.core.test_workers import items
from tests.runner.test_repeats_runner import judge_in_turns
from voirdire.cli import main
from voirdire.runner import run_protocol
from voirdire.transcript import SCHEMA_VERSION, SessionStart, TranscriptError, load

V2 = Path(__file__).with_name("fixtures") / "repeats-v2.jsonl"
EXPECTED = {f"q00{i}@r{r}": (f"q00{i}", r) for i in (0, 1) for r in (1, 2, 3)}


def report(path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    assert main(["report", str(path), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_version_2_transcript_reads_its_repeats_from_their_steps(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "v2.jsonl"
    shutil.copy(V2, path)
    t = load(path)
    assert t.header is not None and t.header.schema_version == 2
    assert all(s.events[0].repeat is None for s in t.sessions.values())  # not in the file: version 2
    assert {sid: (s.item_id, s.repeat) for sid, s in t.sessions.items()} == EXPECTED
    stability = report(path, capsys)["stability"]
    assert isinstance(stability, dict)
    assert (stability["repeats"], stability["assessed"], stability["flipping"]) == (3, 2, 1)
    assert stability["undecided_items"] == ["q000"]


async def test_a_version_3_run_writes_the_repeat_in_its_start_and_reports_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "v3.jsonl"
    client = judge_in_turns("correct", "incorrect", "correct", "correct", "correct", "correct")
    await run_protocol(Chaos(), items(2), out=out, clients={"witness": client, "judge": client}, repeats=3)
    t = load(out)
    assert SCHEMA_VERSION == 3 and t.header is not None and t.header.schema_version == 3
    starts = {sid: s.events[0] for sid, s in t.sessions.items()}
    assert all(isinstance(e, SessionStart) for e in starts.values())
    assert {sid: (e.item_id, e.repeat) for sid, e in starts.items()} == EXPECTED
    steps = [e for s in t.sessions.values() for e in s.events if e.kind == "step" and e.name == "repeat"]
    assert len(steps) == 6 and not any("index" in e.data for e in steps)  # one place for the number
    path = tmp_path / "v2.jsonl"
    shutil.copy(V2, path)
    new, old = report(out, capsys)["stability"], report(path, capsys)["stability"]
    assert isinstance(new, dict) and isinstance(old, dict)
    same = ("repeats", "items", "assessed", "flipping", "flip_rate", "undecided_items")
    assert {k: new[k] for k in same} == {k: old[k] for k in same}


def test_a_repeat_index_below_one_is_a_bad_line(tmp_path: Path) -> None:
    lines = V2.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if '"session_start"' in line)
    start = json.loads(lines[at])
    lines[at] = json.dumps({**start, "repeat": 0})
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(TranscriptError, match=rf"{path.name}:{at + 1}: .*session_start.repeat"):
        load(path)
