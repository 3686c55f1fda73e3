"""``voirdire qa-eval``: lexical and token-F1 on a few EVOUNA rows, the entailment evaluator on scripted models,
resume, the report (per system, hierarchy, decision variants, AUROC, parse failures), and clear errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.qa_entailment.qae_helpers import CELLS, all_entails, cell_rows, evaluator_script, write_jsonl, write_script
from voirdire.cli import main
from voirdire.protocols.qa_entailment.hierarchy import HierarchyCell
from voirdire.transcript import ModelCall, Step, load

FIXTURE = Path(__file__).parent / "fixtures" / "NQ.json"  # EVOUNA NQ rows 0-6: 25 proper items


def qa_eval(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any] | str, str]:
    code = main(["qa-eval", *args, "--no-progress"])
    captured = capsys.readouterr()
    try:
        out: dict[str, Any] | str = json.loads(captured.out)
    except json.JSONDecodeError:
        out = captured.out
    return code, out, captured.err


def scores(report: dict[str, Any], system: str) -> tuple[int, int, int, int]:
    s = report["systems"][system]["scores"]
    return s["tp"], s["fp"], s["fn"], s["tn"]


def test_lexical_on_evouna_rows_with_transcript_and_resume(tmp_path: Path, capsys) -> None:
    out = tmp_path / "lex.jsonl"
    args = ["--data", str(FIXTURE), "--evaluator", "lexical", "--out", str(out), "--json"]
    code, report, _ = qa_eval(capsys, *args, "--limit", "10")
    assert code == 0 and isinstance(report, dict) and report["n_items"] == 10 and report["skipped"] == 0
    code, report, _ = qa_eval(capsys, *args)
    assert code == 0 and isinstance(report, dict)
    assert report["skipped"] == 10 and report["n_graded"] == 25 and report["n_errors"] == 0
    # Hand-checked: e.g. DPR-FiD's "Wilhelm Röntgen" does not contain the gold "Wilhelm Conrad Röntgen".
    assert scores(report, "fid") == (0, 0, 2, 3)
    assert scores(report, "gpt35") == (1, 0, 2, 2)
    assert scores(report, "chatgpt") == (2, 0, 2, 1)
    assert scores(report, "gpt4") == (3, 0, 0, 2)
    assert report["systems"]["chatgpt"]["scores"]["f1"] == pytest.approx(2 / 3)
    assert report["systems"]["chatgpt"]["scores"]["accuracy"] == pytest.approx(0.6)
    assert report["systems"]["gpt4"]["name"] == "GPT-4" and report["systems"]["gpt4"]["hierarchy"] is None
    overall = report["overall"]["scores"]
    assert (overall["tp"], overall["fp"], overall["fn"], overall["tn"]) == (9, 0, 6, 10)
    # Every graded item left a session: its step and its verdict.
    t = load(out)
    assert len(t.sessions) == 25 and t.finished() == set(t.sessions)
    s = t.sessions["NQ-6-gpt35"]
    (step,) = s.of_kind(Step)
    assert step.name == "lexical_match" and step.data["matched_gold"] == "Dai Yongge"
    assert s.verdict is not None and s.verdict.accepted is True and s.verdict.statistics["human_judgment"] is True


def test_token_f1_and_system_selection_by_paper_name(tmp_path: Path, capsys) -> None:
    code, report, _ = qa_eval(
        capsys,
        *["--data", str(FIXTURE), "--evaluator", "f1", "--system", "DPR-FiD,chatgpt", "--json"],
        *["--out", str(tmp_path / "f1.jsonl")],
    )
    assert code == 0 and isinstance(report, dict)
    assert list(report["systems"]) == ["fid", "chatgpt"] and report["n_items"] == 10
    assert scores(report, "fid") == (2, 0, 0, 3)  # short extractive answers: token F1 works
    assert scores(report, "chatgpt") == (0, 0, 4, 1)  # long sentences: F1 below 0.5 even when right
    other = ["--data", str(FIXTURE), "--evaluator", "f1", "--threshold", "0.1", "--out", str(tmp_path / "f1.jsonl")]
    code, _, err = qa_eval(capsys, *other)
    assert code == 2 and "different parameters" in err  # another threshold: the transcript is not mixed
    code, report, _ = qa_eval(capsys, *other, "--fresh", "--json", "--system", "chatgpt")
    assert code == 0 and isinstance(report, dict) and scores(report, "chatgpt") == (3, 0, 1, 1)
    # At 0.1 three of the four right ChatGPT answers pass; "... written by Cyrus the Great, ..." shares one
    # token with the gold "Cyrus" among 61: F1 0.03.


def test_text_report(tmp_path: Path, capsys) -> None:
    report_file = tmp_path / "r" / "report.json"
    code, text, _ = qa_eval(
        capsys,
        *["--data", str(FIXTURE), "--evaluator", "lexical", "--out", str(tmp_path / "t.jsonl")],
        *["--report", str(report_file)],
    )
    assert code == 0 and isinstance(text, str)
    saved = json.loads(report_file.read_text(encoding="utf-8"))
    assert saved["evaluator"] == "lexical" and saved["overall"]["scores"]["n"] == 25
    lines = text.splitlines()
    assert any(line.split()[:2] == ["GPT-4", "5"] for line in lines)
    assert "F1" in text and "all" in text and "transcript:" in text and "hierarchy" not in text


def entailment_setup(tmp_path: Path, script_kw: dict[str, Any] | None = None) -> tuple[Path, Path]:
    data = write_jsonl(tmp_path / "cells.jsonl", cell_rows())
    answers = [a for a, _ in CELLS.values()]
    script = write_script(tmp_path / "evaluator.yaml", evaluator_script(answers, all_entails(), **(script_kw or {})))
    return data, script


def test_entailment_with_a_scripted_evaluator(tmp_path: Path, capsys) -> None:
    data, script = entailment_setup(tmp_path)
    out = tmp_path / "ent.jsonl"
    args = ["--data", str(data), "--evaluator", "entailment", "--model", f"evaluator=scripted:{script}"]
    code, report, _ = qa_eval(capsys, *args, "--out", str(out), "--partial-marks", "--json")
    assert code == 0 and isinstance(report, dict) and report["n_errors"] == 0
    # One answer per cell (Tables 9–10), each from its own "system".
    for cell in CELLS:
        h = report["systems"][cell.name.lower()]["hierarchy"]
        assert h[cell.value] == 1 and sum(h.values()) == 1
    assert report["overall"]["hierarchy"] == {c.value: 1 for c in HierarchyCell} | {"undetermined": 0}
    # Humans accept the A_sup answers only. Union judges A_inf − A_sup correct too (one false positive);
    # minus does not (Table 11).
    overall = report["overall"]
    assert (overall["scores"]["tp"], overall["scores"]["fp"], overall["scores"]["tn"]) == (2, 1, 1)
    assert overall["by_decision"]["union"]["f1"] == pytest.approx(0.8)
    assert overall["by_decision"]["minus"]["f1"] == 1.0 and overall["by_decision"]["minus"]["accuracy"] == 1.0
    # Partial marks: A_sup answers rank on top, the explained A_inf − A_sup answer by its mark, the rest last.
    aurocs = report["aurocs"]
    assert set(aurocs) == {"CIA", "C", "IA", "token_f1"}
    assert aurocs["CIA"]["auroc"] == 1.0 and aurocs["CIA"]["n"] == 4
    assert report["replies"] == {
        "model_calls": 4 * 3 + 1 + 1,  # 4 system + 1 shared gold QA2D, 8 entailment tests, 1 explanation
        "parse_failures": 0,
        "failure_rate": 0.0,
        "by_step": {},
        "items_with_failures": 0,
    }
    t = load(out)
    s = t.sessions["q1-inf_only"]
    assert [e.name for e in s.of_kind(Step)] == [
        "statement", "statement", "entailment", "entailment", "membership", "explanation",
        "partial_mark", "partial_mark", "partial_mark",
    ]  # fmt: skip
    assert t.header is not None and t.header.roles["evaluator"].spec == f"scripted:{script}"
    assert t.header.parameters["explain"] is True and t.header.parameters["decision"] == "union"

    # Same command again: everything resumed, nothing asked. Another decision variant: refused, not mixed.
    code, report, _ = qa_eval(capsys, *args, "--out", str(out), "--partial-marks", "--json")
    assert code == 0 and isinstance(report, dict) and report["skipped"] == 4
    code, _, err = qa_eval(capsys, *args, "--out", str(out), "--partial-marks", "--decision", "minus")
    assert code == 2 and "different parameters" in err
    code, report, _ = qa_eval(capsys, *args, "--out", str(tmp_path / "m.jsonl"), "--decision", "minus", "--json")
    assert code == 0 and isinstance(report, dict) and report["decision"] == "minus"
    assert report["overall"]["scores"]["f1"] == 1.0 and report["aurocs"] is None


def test_entailment_text_report_and_malformed_reply(tmp_path: Path, capsys) -> None:
    data, script = entailment_setup(tmp_path, {"first": {r"Premise: Mary Shelley": "It depends."}})
    code, text, _ = qa_eval(
        capsys,
        *["--data", str(data), "--evaluator", "entailment", "--model", f"evaluator=scripted:{script}"],
        *["--out", str(tmp_path / "e.jsonl")],
    )
    assert code == 0 and isinstance(text, str)
    assert "hierarchy (Tables 9–10)" in text and "decision variants (Table 11)" in text
    assert "unparseable: 1 (7.7%; entailment 1)" in text
    neither = next(line for line in text.splitlines() if line.startswith("neither"))
    assert neither.split()[1:3] == ["1", "1"]  # n = 1, undetermined = 1 (scored as judged incorrect)
    t = load(tmp_path / "e.jsonl")
    v = t.sessions["q1-neither"].verdict
    assert v is not None and v.decision == "undetermined"
    assert len(t.sessions["q1-neither"].of_kind(ModelCall)) == 3


def test_auroc_report_prints_each_schemes_n(tmp_path: Path, capsys) -> None:
    # The A_inf − A_sup answer's explanation cannot be read: CIA leaves it out, token F1 ranks every judged answer.
    data, script = entailment_setup(tmp_path, {"explanation": "It just follows."})
    code, text, _ = qa_eval(
        capsys,
        *["--data", str(data), "--evaluator", "entailment", "--model", f"evaluator=scripted:{script}"],
        *["--partial-marks", "--out", str(tmp_path / "e.jsonl")],
    )
    assert code == 0 and isinstance(text, str)
    rows = {line.split()[0]: line.split() for line in text.splitlines() if line.startswith("  ")}
    assert rows["CIA"][-3:] == ["n=3", "left", "out=1"]
    assert rows["token_f1"][-3:] == ["n=4", "left", "out=0"]


def test_llm_score_sign_and_population_flags(tmp_path: Path, capsys) -> None:
    data, script = entailment_setup(tmp_path, {"closeness": "5 (completely right)"})
    args = ["--data", str(data), "--evaluator", "entailment", "--model", f"evaluator=scripted:{script}", "--json"]
    code, report, _ = qa_eval(capsys, *args, "--llm-score", "--out", str(tmp_path / "a.jsonl"))
    assert code == 0 and isinstance(report, dict) and report["parameters"]["llm_score_sign"] == "closeness"
    t = load(tmp_path / "a.jsonl")
    marks = {sid: s.verdict.statistics["partial_marks"].get("llm_score") for sid, s in t.sessions.items() if s.verdict}
    assert marks == {"q1-sup_only": None, "q1-both": None, "q1-inf_only": 5.0, "q1-neither": None}
    # The authors' notebook: -closeness, and (baseline-scoring.py) both one-directional cells scored.
    more = ["--llm-score", "--llm-score-negated", "--explain-sup", "--out", str(tmp_path / "b.jsonl")]
    code, report, _ = qa_eval(capsys, *args, *more)
    assert code == 0 and isinstance(report, dict) and report["parameters"]["llm_score_sign"] == "negated"
    t = load(tmp_path / "b.jsonl")
    marks = {sid: s.verdict.statistics["partial_marks"].get("llm_score") for sid, s in t.sessions.items() if s.verdict}
    assert marks == {"q1-sup_only": -5.0, "q1-both": None, "q1-inf_only": -5.0, "q1-neither": None}
    code, _, err = qa_eval(capsys, *args, "--llm-score-negated")
    assert code == 2 and "--llm-score-negated: only with --llm-score" in err


def test_entailment_with_the_nli_model_by_flag(tmp_path: Path, capsys) -> None:
    pytest.importorskip("sentence_transformers")
    from tests.qa_entailment.tiny_nli import NLI_LABELS, build_cross_encoder

    model = build_cross_encoder(tmp_path / "nli", NLI_LABELS, favour=0)  # always "contradiction"
    data, script = entailment_setup(tmp_path)
    code, report, _ = qa_eval(
        capsys,
        *["--data", str(data), "--evaluator", "entailment", "--model", f"evaluator=scripted:{script}"],
        *["--nli-model", str(model), "--out", str(tmp_path / "n.jsonl"), "--json"],
    )
    assert code == 0 and isinstance(report, dict)
    assert report["overall"]["hierarchy"][HierarchyCell.NEITHER.value] == 4
    assert report["parameters"]["backend"] == "nli" and report["replies"]["model_calls"] == 5  # QA2D only
    code, _, err = qa_eval(
        capsys, "--data", str(data), "--evaluator", "entailment", "--nli-model", str(tmp_path / "missing")
    )
    assert code == 2 and "cannot load an NLI cross-encoder" in err


def test_malformed_dataset_rows_are_named(tmp_path: Path, capsys) -> None:
    rows = json.loads(FIXTURE.read_text(encoding="utf-8"))
    rows[2]["judge_gpt4"] = "yes"
    bad = tmp_path / "NQ.json"
    bad.write_text(json.dumps(rows), encoding="utf-8")
    code, _, err = qa_eval(capsys, "--data", str(bad), "--evaluator", "lexical", "--out", str(tmp_path / "x.jsonl"))
    assert code == 2
    assert f"{bad}, row 2 (0-based index in the JSON list): field 'judge_gpt4" in err

    lines = cell_rows()[:2]
    del lines[1]["system_answer"]
    bad_jsonl = write_jsonl(tmp_path / "bad.jsonl", lines)
    code, _, err = qa_eval(capsys, "--data", str(bad_jsonl), "--evaluator", "lexical")
    assert code == 2 and f"{bad_jsonl}, line 2: field 'system_answer': Field required" in err
    bad_jsonl.write_text(json.dumps(cell_rows()[0]) + "\n{oops\n", encoding="utf-8")
    code, _, err = qa_eval(capsys, "--data", str(bad_jsonl), "--evaluator", "f1")
    assert code == 2 and f"{bad_jsonl}, line 2: invalid JSON" in err


def test_usage_errors(tmp_path: Path, capsys) -> None:
    code, _, err = qa_eval(capsys, "--data", str(tmp_path / "none.json"), "--evaluator", "lexical")
    assert code == 2 and "no such dataset file" in err
    code, _, err = qa_eval(capsys, "--data", str(FIXTURE), "--evaluator", "lexical", "--system", "gpt5")
    assert code == 2 and "unknown EVOUNA system(s) ['gpt5']" in err
    data = write_jsonl(tmp_path / "d.jsonl", cell_rows())
    code, _, err = qa_eval(capsys, "--data", str(data), "--evaluator", "lexical", "--system", "other")
    assert code == 2 and "no items of system(s) ['other']" in err and "'both'" in err
    code, _, err = qa_eval(capsys, "--data", str(FIXTURE), "--evaluator", "lexical", "--partial-marks")
    assert code == 2 and "--partial-marks: only for --evaluator entailment" in err
    code, _, err = qa_eval(capsys, "--data", str(FIXTURE), "--evaluator", "lexical", "--offset", "99")
    assert code == 2 and "no items to grade" in err
    shutil.copy(FIXTURE, tmp_path / "NQ.json")
    code, _, err = qa_eval(
        capsys, "--data", str(tmp_path / "NQ.json"), "--evaluator", "entailment", "--model", "evaluator=gpt4"
    )
    assert code == 2 and "unknown model spec" in err
