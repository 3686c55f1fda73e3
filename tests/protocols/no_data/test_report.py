"""``voirdire report`` on a No-Data transcript: the per-seed scores and aggregates ``voirdire nodata`` printed,
read back from the verdicts alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voirdire.cli import main
from voirdire.protocols.no_data.report import NoDataReport, report
from voirdire.registry.plugins import get
from voirdire.transcript import load


@pytest.fixture
def small(shared_data: Path, tmp_path: Path, monkeypatch) -> Path:
    root = shared_data / "no_data_algorithm"
    monkeypatch.setenv("VOIRDIRE_NO_DATA_DIR", str(root))
    path = tmp_path / "ip_small.json"
    path.write_text(json.dumps(json.loads((root / "good_data_test_with_xor.json").read_text())[:30]))
    return path


def test_report_of_a_nodata_transcript_is_what_nodata_printed(small: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "t.jsonl"
    args = ["nodata", "--data", str(small), "--rubric", "oop", "--generator", "lie-f", "--label-noise", "0.1"]
    assert main([*args, "--seed", "1", "--seeds", "3", "--out", str(out), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert get("no_data").report is report

    assert main(["report", str(out), "--json"]) == 0
    r = NoDataReport.model_validate_json(capsys.readouterr().out)
    assert r.protocol == "no_data" and r.transcript == str(out)
    assert (r.sessions, r.verdicts, r.errors) == (90, 90, 0)
    assert [s.model_dump(mode="json") for s in r.runs] == printed["runs"]
    assert {k: v.model_dump() for k, v in r.aggregate.items()} == printed["aggregate"]
    assert (r.dataset, r.rubric, r.datapoints, r.evaluator, r.generator) == (
        "ip_small",
        "oop",
        30,
        "decision-tree",
        "lie-f",
    )
    assert all(s.known_accuracy is not None for s in r.runs)  # the tree's own labels travel in the verdicts

    assert main(["report", str(out)]) == 0
    text = capsys.readouterr().out
    assert "ip_small (30 datapoints, verifier rubric oop) · evaluator decision-tree, generator lie-f" in text
    assert "mean ± sd over 3 seeds: accuracy" in text and "Lemma 1: a lie survives r = 3 rounds" in text
    assert "no_data: 90 sessions, 90 verdicts, 0 errors" in text


def test_a_session_without_a_verdict_is_missing_not_scored(small: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "t.jsonl"
    assert main(["nodata", "--data", str(small), "--rubric", "ip", "--limit", "5", "--out", str(out), "--json"]) == 0
    capsys.readouterr()
    lines = out.read_text().splitlines()
    cut = [
        ln
        for ln in lines
        if not (json.loads(ln).get("kind") == "verdict" and json.loads(ln)["session_id"].endswith("-03"))
    ]
    out.write_text("\n".join(cut) + "\n")
    (run,) = report(load(out)).runs
    assert (run.n, run.missing) == (4, 1)
