"""``read_run`` streams a transcript (``report_file``) instead of loading it: the same sessions, verdicts and items
as the loaded transcript gives, the attempt that counts picked as ``load`` picks it, and the file read whole only
where ``report_file`` would (a file appended to itself)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import voirdire.reports.fold as report_module
from tests.core.test_report import FIXTURES, VARIED, _records, _variant
from voirdire.certificate import read_run
from voirdire.transcript import load


@pytest.mark.parametrize("kind", ["rerun", "resume", "crash", "twice"])
@pytest.mark.parametrize("name", VARIED)
def test_a_run_is_read_as_its_loaded_transcript_without_loading_it(
    name: str, kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records, tail = _variant(_records(FIXTURES / f"{name}.jsonl"), kind)
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + tail)
    loads: list[object] = []
    monkeypatch.setattr(report_module, "load", lambda p: loads.append(p) or load(p))
    monkeypatch.setattr("voirdire.transcript.load", lambda p: loads.append(p) or load(p))
    run = read_run(path)
    assert bool(loads) == (kind == "twice")  # only a file the runner cannot write is read whole
    t = load(path)
    expected = [
        (sid, s.item_id or sid, s.verdict.decision if s.verdict else None, s.verdict.accepted if s.verdict else None)
        for sid, s in t.sessions.items()
    ]
    assert [(s.session_id, s.item_id, s.decision, s.accepted) for s in run.sessions] == expected
    assert list(run.items) == list(dict.fromkeys(item_id for _, item_id, _, _ in expected))
    assert run.protocol == (t.header.protocol if t.header else "")
