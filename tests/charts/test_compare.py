"""``voirdire compare``: two runs over the same items, verdict by verdict, with agreement, Cohen's κ and each
run's gold agreement; the --disagree filter, --json, the heatmaps, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.web import runs
from voirdire.analysis.compare import compare, comparison_charts, kappa
from voirdire.cli import main

SKEPTIC = """\
rules:
  - match: verify the correctness of the following claim
    reply: "1. Where is it?"
  - match: Do you have any follow-up questions
    reply: "No."
  - match: correct or incorrect\\\\?
    reply: "The claim is incorrect."
"""


@pytest.fixture(scope="module")
def two_runs(
    transcripts: dict[str, Path], scripts: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Path]:
    """The fixture's LMvLM run (Paris accepted, Rome rejected) and one whose examiner rejects every claim."""
    first = transcripts["cross_examination"]
    folder = tmp_path_factory.mktemp("compare")
    (folder / "skeptic.yaml").write_text(SKEPTIC, encoding="utf-8")
    second = folder / "skeptic.jsonl"
    runs.run(
        "examine", "--questions", str(scripts / "questions.jsonl"), "--out", str(second),
        "--model", f"examiner=scripted:{folder / 'skeptic.yaml'}",
        "--model", f"examinee=scripted:{scripts / 'examinee.yaml'}",
    )  # fmt: skip
    return first, second


def test_kappa_is_scikit_learns_and_undefined_for_one_label() -> None:
    # p_o = 3/4, p_e = 1/2 * 1/4 + 1/2 * 3/4 = 1/2: κ = (3/4 - 1/2) / (1 - 1/2) = 1/2
    assert kappa(["a", "a", "b", "b"], ["a", "b", "b", "b"]) == pytest.approx(0.5)
    assert kappa(["a", "a"], ["a", "a"]) is None
    assert kappa([], []) is None


def test_two_runs_item_by_item(two_runs: tuple[Path, Path]) -> None:
    c = compare(two_runs)
    assert [r.item_id for r in c.rows] == ["paris", "rome"]
    assert c.rows[0].verdicts == ["correct", "incorrect"] and c.rows[0].agree is False
    assert c.rows[1].verdicts == ["incorrect", "incorrect"] and c.rows[1].agree is True
    (pair,) = c.pairs
    assert pair.n == 2 and pair.agreement == 0.5 and pair.kappa == pytest.approx(0.0)
    assert (c.runs[0].gold_agree, c.runs[0].gold_known) == (2, 2)
    assert (c.runs[1].gold_agree, c.runs[1].gold_known) == (1, 2)
    assert compare(two_runs, by="accepted").rows[0].verdicts == ["accepted", "rejected"]
    heat = {ch.name: ch for ch in comparison_charts(c)}
    assert heat["agreement"].values == ((1.0, 0.5), (0.5, 1.0))  # type: ignore[union-attr]


def test_compare_command_prints_agreement_and_kappa(
    two_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["compare", *map(str, two_runs), "--disagree", "--plot", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "[1] vs [2]: agreement 50.0% on 2 items, Cohen's κ 0.000" in out
    assert "≠ paris" in out and "rome" not in out.split("disagreements")[1]
    assert (tmp_path / "agreement.svg").exists() and (tmp_path / "kappa.svg").exists()
    assert main(["compare", *map(str, two_runs), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["pairs"][0]["kappa"] == pytest.approx(0.0) and payload["disagreements"] == 1
    assert payload["runs"][1]["gold_rate"] == 0.5


def test_runs_without_shared_items_and_one_run_are_one_line_errors(
    transcripts: dict[str, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["compare", str(transcripts["cross_examination"]), str(transcripts["no_data"])]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no item in common" in err
    assert main(["compare", str(transcripts["no_data"])]) == 2
    assert "two or more" in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "missing.jsonl"), str(transcripts["no_data"])]) == 2
    assert "missing.jsonl: no such transcript" in capsys.readouterr().err
