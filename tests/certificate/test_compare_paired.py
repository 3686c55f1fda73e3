"""``voirdire compare`` with paired tests: McNemar's exact test and paired bootstrap intervals for runs over the
same items; which run agrees with gold more, and what does not count when the items differ."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voirdire.certificate import paired_runs
from voirdire.cli.main import main


def qa_run(tmp_path: Path, name: str, hits: set[int], items: range = range(200)) -> Path:
    """A qa_lexical run over items q0..q199 whose answer contains the gold answer on ``hits``; people judge the
    first 130 correct."""
    data = tmp_path / f"{name}.jsonl"
    rows = [{"id": f"q{i}", "question": f"question {i}?", "gold_answers": [f"answer{i}"],
             "system_answer": f"it is answer{i}" if i in hits else "no idea", "human_judgment": i < 130}
            for i in items]  # fmt: skip
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / f"{name}-run.jsonl"
    assert main(["run", "qa_lexical", "--data", str(data), "--out", str(out), "--no-progress"]) == 0
    return out


def test_runs_differing_on_30_items_in_one_direction(tmp_path: Path, capsys) -> None:
    a = qa_run(tmp_path, "a", set(range(130)))  # right on all 200
    b = qa_run(tmp_path, "b", set(range(100)))  # misses 30 correct answers
    capsys.readouterr()
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "McNemar exact: p < 0.001 (30 items only A accepts, 0 only B accepts, of 200)" in out
    assert "run A agrees with gold more than run B" in out
    assert main(["compare", str(a), str(b), "--json"]) == 0
    paired = json.loads(capsys.readouterr().out)["paired"][0]
    assert paired["shared"] == 200 and paired["dropped"] == []
    assert paired["accept_rate"]["estimate"] == pytest.approx(0.15)
    assert 0 < paired["gold_agreement"]["low"] < 0.15 < paired["gold_agreement"]["high"]
    assert paired["gold_mcnemar"]["p_value"] < 0.001


def test_identical_runs_p_is_1(tmp_path: Path, capsys) -> None:
    a = qa_run(tmp_path, "a", set(range(0, 200, 3)))
    b = qa_run(tmp_path, "b", set(range(0, 200, 3)))
    capsys.readouterr()
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "McNemar exact: p = 1.000 (0 items only A accepts, 0 only B accepts, of 200)" in out
    assert "accept rate A − B: 0.0% (no interval: every resample gives 0" in out
    assert "which run is better: undecided" in out


def test_items_that_differ_are_said_not_to_count(tmp_path: Path, capsys) -> None:
    a = qa_run(tmp_path, "a", set(range(130)), range(0, 200))
    b = qa_run(tmp_path, "b", set(range(100)), range(20, 210))
    capsys.readouterr()
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "180 shared items" in out
    assert "not counted: 20 items judged only in [1]" in out and "not counted: 10 items judged only in [2]" in out


def test_repeats_count_once_in_mcnemar_and_by_item_in_the_bootstrap() -> None:
    a = {f"q{i}": [(True, True)] * 3 for i in range(40)}
    b = {f"q{i}": [(i >= 10, True), (i >= 10, True), (True, True)] for i in range(40)}
    b["tie"] = [(True, None), (False, None)]
    a["tie"] = [(True, None), (False, None)]
    p = paired_runs(a, b)
    assert p.shared == 41 and p.mcnemar is not None
    assert (p.mcnemar.n, p.mcnemar.only_a, p.mcnemar.only_b) == (40, 10, 0)
    assert any("repeats tie" in d for d in p.dropped)
    assert p.accept_rate.n == 41 and p.accept_rate.method.startswith("bootstrap")
    assert p.gold_items == 40  # the tied item has no gold
