"""``voirdire report`` on transcripts of the three QA graders: the per-system scores ``qa-eval`` prints, computed
from the transcript alone (and, for the entailment grader, the hierarchy, decision variants, AUROCs and replies)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.protocols.qa_entailment.helpers import (
    CELLS,
    all_entails,
    cell_rows,
    evaluator_script,
    write_jsonl,
    write_script,
)
from voirdire.cli import main
from voirdire.models import ScriptedChatCompletionClient
from voirdire.protocols.qa_entailment.data import QAItem, load_jsonl
from voirdire.protocols.qa_entailment.protocol import QAEntailmentGrading, QAEntailmentParams
from voirdire.protocols.qa_entailment.report import QAReport, report
from voirdire.runner import run_protocol
from voirdire.transcript import load

FIXTURE = Path(__file__).parent / "fixtures" / "NQ.json"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[dict[str, Any], str]:
    """The --json report and the text of one command."""
    assert main([*args, "--json", "--no-progress"]) == 0, capsys.readouterr().err
    payload = json.loads(capsys.readouterr().out)
    assert main([*args, "--no-progress"]) == 0  # resumed: the same report again, as text
    return payload, capsys.readouterr().out


def voirdire_report(capsys: pytest.CaptureFixture[str], transcript: Path) -> tuple[dict[str, Any], str]:
    assert main(["report", str(transcript), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert main(["report", str(transcript)]) == 0
    return payload, capsys.readouterr().out


def the_scores(text: str) -> str:
    """qa-eval's text without its first line (the data file) and the lines after the report (time, transcript)."""
    return text.split("\n", 1)[1].split("\ntime:")[0]


def without_certificate(report_text: str) -> str:
    """``voirdire report``'s text up to its certificate section, which the run's own summary does not print (it is
    checked in tests/certificate/test_certificate_section.py)."""
    head, found, _ = report_text.partition("\ncertificate (")
    assert found, "voirdire report ends with the certificate section"
    return head.rstrip("\n")


@pytest.mark.parametrize(("evaluator", "protocol"), [("lexical", "qa_lexical"), ("f1", "qa_token_f1")])
def test_report_of_a_baseline_transcript(tmp_path: Path, capsys, evaluator: str, protocol: str) -> None:
    out = tmp_path / "t.jsonl"
    printed, text = run(capsys, "qa-eval", "--data", str(FIXTURE), "--evaluator", evaluator, "--out", str(out))
    reported, report_text = voirdire_report(capsys, out)
    assert reported["protocol"] == protocol and reported["evaluator"] == evaluator
    assert (reported["sessions"], reported["verdicts"], reported["errors"]) == (25, 25, 0)
    for key in ("systems", "overall", "n_items", "n_graded", "n_errors", "aurocs"):
        assert reported[key] == printed[key], key
    assert without_certificate(report_text) == the_scores(text)
    assert "hierarchy" not in report_text and "model replies" not in report_text


def test_report_of_an_entailment_transcript(tmp_path: Path, capsys) -> None:
    data = write_jsonl(tmp_path / "cells.jsonl", cell_rows())
    script = evaluator_script([a for a, _ in CELLS.values()], all_entails(), first={r"Premise: Mary Shelley": "Hmm."})
    model = f"evaluator=scripted:{write_script(tmp_path / 'e.yaml', script)}"
    out = tmp_path / "t.jsonl"
    args = ["qa-eval", "--data", str(data), "--evaluator", "entailment", "--model", model, "--partial-marks"]
    printed, text = run(capsys, *args, "--out", str(out))
    reported, report_text = voirdire_report(capsys, out)
    assert reported["protocol"] == "qa_entailment" and reported["decision"] == "union"
    for key in ("systems", "overall", "aurocs"):
        assert reported[key] == printed[key], key
    assert reported["model_replies"] == printed["replies"] and printed["replies"]["by_step"] == {"entailment": 1}
    assert reported["parse_failures"] == {"evaluator · qa_entailment/entailment": 1}
    assert without_certificate(report_text) == the_scores(text)
    for part in ("hierarchy (Tables 9–10)", "decision variants (Table 11)", "AUROC", "unparseable: 1"):
        assert part in report_text


async def test_the_report_needs_only_the_transcript(tmp_path: Path) -> None:
    # Written by the Python API, not the CLI; one session fails (the script has no reply for its answer).
    rows = [r for r in cell_rows() if r["system"] in ("both", "neither")]
    other = QAItem(id="q1-other", question="q", gold_answers=("x",), system="both", system_answer="y")
    items = [*load_jsonl(write_jsonl(tmp_path / "d.jsonl", rows)), other]
    client = ScriptedChatCompletionClient(evaluator_script([a for a, _ in CELLS.values()], set()))
    out = tmp_path / "t.jsonl"
    await run_protocol(
        QAEntailmentGrading(QAEntailmentParams(explain=False)), items, out=out, clients={"evaluator": client}
    )
    r = report(load(out))
    assert isinstance(r, QAReport) and r.transcript == str(out) and r.evaluator == "entailment"
    assert (r.n_items, r.n_graded, r.n_errors, r.errors) == (3, 2, 1, 1)
    assert r.systems["both"].n_errors == 1 and r.systems["both"].scores is not None
    assert r.aurocs is None  # no partial marks
    assert "sessions that failed (not scored; re-run to retry): 1" in r.text()
