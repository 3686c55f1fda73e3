"""``voirdire qa-eval`` and ``voirdire run qa_lexical | qa_token_f1 | qa_entailment``: lexical and token-F1 on a few
EVOUNA rows, the entailment evaluator on scripted models and behind an OpenAI-compatible endpoint (a fake server on
127.0.0.1) with the paper's API settings, resume, the report (per system, hierarchy, decision variants, AUROC, parse
failures), and clear errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.fake_openai import FakeOpenAIServer
from tests.protocols.qa_entailment.helpers import (
    CELLS,
    all_entails,
    cell_rows,
    evaluator_script,
    rule_based_evaluator,
    write_jsonl,
    write_script,
)
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
    assert code == 2 and "--threshold: 0.5 in " in err and "0.1 now; use --out or --fresh" in err  # not mixed
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
    assert code == 2 and "--decision: union in " in err and "minus now; use --out or --fresh" in err
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
    from tests.protocols.qa_entailment.tiny_nli import NLI_LABELS, build_cross_encoder

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
    assert f"{bad}[2]: field 'judge_gpt4" in err

    lines = cell_rows()[:2]
    del lines[1]["system_answer"]
    bad_jsonl = write_jsonl(tmp_path / "bad.jsonl", lines)
    code, _, err = qa_eval(capsys, "--data", str(bad_jsonl), "--evaluator", "lexical")
    assert code == 2 and f"{bad_jsonl}:2: field 'system_answer': Field required" in err
    bad_jsonl.write_text(json.dumps(cell_rows()[0]) + "\n{oops\n", encoding="utf-8")
    code, _, err = qa_eval(capsys, "--data", str(bad_jsonl), "--evaluator", "f1")
    assert code == 2 and f"{bad_jsonl}:2: invalid JSON" in err


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
    assert code == 2 and "--offset: 99 skips every item to grade" in err
    shutil.copy(FIXTURE, tmp_path / "NQ.json")
    code, _, err = qa_eval(
        capsys, "--data", str(tmp_path / "NQ.json"), "--evaluator", "entailment", "--model", "evaluator=gpt4"
    )
    assert code == 2 and "unknown model spec" in err


# ----------------------------------------------------------------------------------------- voirdire run


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main([*args, "--json", "--no-progress"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def same_report(a: dict[str, Any], b: dict[str, Any]) -> None:
    """Equal but for what names one run: its id, time and transcript."""
    for report in (a, b):
        for key in ("run_id", "elapsed_s", "transcript"):
            report.pop(key)
    assert a == b


def test_run_qa_lexical_works_like_qa_eval_lexical(tmp_path: Path, capsys) -> None:
    data = ["--data", str(FIXTURE), "--system", "gpt4,ChatGPT", "--skip-empty-gold"]
    friendly = run_json(capsys, "qa-eval", *data, "--evaluator", "lexical", "--out", str(tmp_path / "a.jsonl"))
    generic = run_json(capsys, "run", "qa_lexical", *data, "--out", str(tmp_path / "b.jsonl"))
    assert list(generic["systems"]) == ["gpt4", "chatgpt"] and generic["parameters"] == {"skip_empty_gold": True}
    same_report(friendly, generic)
    assert main(["qa-eval", *data, "--evaluator", "lexical", "--out", str(tmp_path / "a.jsonl"), "--no-progress"]) == 0
    text_friendly = capsys.readouterr().out
    assert main(["run", "qa_lexical", *data, "--out", str(tmp_path / "b.jsonl"), "--no-progress"]) == 0
    text_generic = capsys.readouterr().out
    assert text_friendly.split("time:")[0] == text_generic.split("time:")[0]


def test_run_qa_token_f1_and_qa_entailment(tmp_path: Path, capsys) -> None:
    data = ["--data", str(FIXTURE), "--system", "fid", "--threshold", "0.1"]
    friendly = run_json(capsys, "qa-eval", *data, "--evaluator", "f1", "--out", str(tmp_path / "a.jsonl"))
    generic = run_json(capsys, "run", "qa_token_f1", *data, "--out", str(tmp_path / "b.jsonl"))
    same_report(friendly, generic)
    code, _, err = qa_eval(capsys, "--data", str(FIXTURE), "--threshold", "0.1", "--out", str(tmp_path / "c.jsonl"))
    assert code == 2 and "--evaluator: give one of lexical, f1, entailment" in err  # qa-eval names its grader
    # voirdire run qa_entailment is the entailment grader, with qa-eval's options and the paper's API settings.
    cells, script = entailment_setup(tmp_path)
    args = ["--data", str(cells), "--model", f"evaluator=scripted:{script}", "--partial-marks", "--decision", "minus"]
    friendly = run_json(capsys, "qa-eval", *args, "--evaluator", "entailment", "--out", str(tmp_path / "d.jsonl"))
    generic = run_json(capsys, "run", "qa_entailment", *args, "--out", str(tmp_path / "e.jsonl"))
    same_report(friendly, generic)
    assert generic["decision"] == "minus" and generic["parameters"]["explain"] is True
    header = load(tmp_path / "e.jsonl").header
    assert header is not None and header.roles["evaluator"].max_tokens == 300 and header.roles["evaluator"].seed == 42


def test_options_of_another_grader_are_named(tmp_path: Path, capsys) -> None:
    base = ["--data", str(FIXTURE), "--out", str(tmp_path / "x.jsonl")]
    code, _, err = qa_eval(capsys, *base, "--evaluator", "lexical", "--threshold", "0.3")
    assert code == 2 and "--threshold: only for --evaluator f1" in err
    code, _, err = qa_eval(capsys, *base, "--evaluator", "f1", "--skip-empty-gold", "--llm-score", "--max-gold", "2")
    assert code == 2 and "--skip-empty-gold: only for --evaluator lexical" in err
    assert "--llm-score, --max-gold: only for --evaluator entailment" in err
    code, _, err = qa_eval(capsys, *base, "--evaluator", "lexical", "--nli-model", "/nowhere", "--explain-sup")
    assert code == 2 and "--nli-model, --explain-sup: only for --evaluator entailment" in err
    code, _, err = qa_eval(capsys, *base, "--evaluator", "f1", "--threshold", "2")
    assert code == 2 and "--threshold: Input should be less than or equal to 1" in err
    code, _, err = qa_eval(capsys, *base, "--evaluator", "entailment", "--nli-labels", "entailment,neutral,neutral")
    assert code == 2 and "--nli-labels: must name" in err and "once each" in err
    code, _, err = qa_eval(capsys, *base, "--evaluator", "entailment", "--max-gold", "0")
    assert code == 2 and "--max-gold: Input should be greater than or equal to 1" in err


# -------------------------------------------------------------------------------------- an OpenAI-compatible evaluator


def test_qa_eval_against_an_openai_compatible_evaluator(tmp_path: Path, capsys) -> None:
    out = tmp_path / "t.jsonl"
    with FakeOpenAIServer(rule_based_evaluator) as server:
        code = main(
            [
                "qa-eval",
                *["--data", str(FIXTURE), "--evaluator", "entailment", "--system", "gpt4", "--partial-marks"],
                *["--model", f"evaluator=openai-compatible:fake-evaluator@{server.url}", "--max-tokens", "64"],
                *["--out", str(out), "--json", "--no-progress"],
            ]
        )
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["n_graded"] == 5 and report["errors"] == {}
    # Every call went over HTTP as a fresh one-message conversation, bounded by --max-tokens.
    assert len(server.requests) == report["replies"]["model_calls"] == 5 + 9 + 2 * 9
    assert all(r["model"] == "fake-evaluator" and r["max_tokens"] == 64 for r in server.requests)
    # The paper's other API settings (App. A.1) still apply: only max_tokens was set by the user.
    assert all(r["seed"] == 42 and r["temperature"] == 0.0 for r in server.requests)
    assert all(len(r["messages"]) == 1 and r["messages"][0]["role"] == "user" for r in server.requests)
    assert server.requests[0]["messages"][0]["content"].startswith("Convert a question answer pair")
    t = load(out)
    assert t.header is not None and t.header.roles["evaluator"].spec.startswith("openai-compatible:fake-evaluator@")
    calls = [c for s in t.sessions.values() for c in s.of_kind(ModelCall)]
    assert len(calls) == len(server.requests) and {c.model for c in calls} == {t.header.roles["evaluator"].spec}
    # GPT-4's answer names the whole gold "Wilhelm Conrad Röntgen" and more: system => gold only, A_sup − A_inf.
    # Its answer about amplitude modulation shares no word with "Olivia" / "MFSK": S − (A_sup ∪ A_inf).
    first = t.sessions["NQ-0-gpt4"].verdict
    assert first is not None
    assert first.statistics["gold_statements"] == [
        "The answer to 'who got the first nobel prize in physics' is: Wilhelm Conrad Röntgen"
    ]
    cells = {sid: s.verdict.statistics["cell"] for sid, s in t.sessions.items() if s.verdict}
    assert cells["NQ-0-gpt4"] == HierarchyCell.SUP_ONLY.value and cells["NQ-2-gpt4"] == HierarchyCell.NEITHER.value
    assert sum(report["systems"]["gpt4"]["hierarchy"].values()) == 5


def _requests(tmp_path: Path, capsys, *extra: str) -> list[dict]:
    with FakeOpenAIServer(rule_based_evaluator) as server:
        code = main(
            [
                "qa-eval",
                *["--data", str(FIXTURE), "--evaluator", "entailment", "--system", "gpt4", "--limit", "1"],
                *["--model", f"evaluator=openai-compatible:fake-evaluator@{server.url}"],
                *["--out", str(tmp_path / "t.jsonl"), "--fresh", "--json", "--no-progress", *extra],
            ]
        )
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    assert server.requests
    return server.requests


def test_qa_eval_sends_the_papers_api_settings_unless_told_otherwise(tmp_path: Path, capsys) -> None:
    # App. A.1: seed=42, temperature=0.0, max_tokens=300 for every call (not the core's 256 tokens and no seed).
    sent = {(r["max_tokens"], r["temperature"], r["seed"]) for r in _requests(tmp_path, capsys)}
    assert sent == {(300, 0.0, 42)}
    header = load(tmp_path / "t.jsonl").header
    assert header is not None
    binding = header.roles["evaluator"]
    assert (binding.max_tokens, binding.temperature, binding.seed) == (300, 0.0, 42)
    # Flags win, each on its own.
    sent = {(r["max_tokens"], r["temperature"], r["seed"]) for r in _requests(tmp_path, capsys, "--seed", "7")}
    assert sent == {(300, 0.0, 7)}
    # So does a --config table, key by key; what it leaves out still gets the paper's value.
    config = tmp_path / "run.toml"
    config.write_text("[roles.evaluator]\nmax_tokens = 128\ntemperature = 0.5\n", encoding="utf-8")
    sent = {
        (r["max_tokens"], r["temperature"], r["seed"]) for r in _requests(tmp_path, capsys, "--config", str(config))
    }
    assert sent == {(128, 0.5, 42)}
    # A [roles."*"] table binds the evaluator too when it has no table of its own; its 256 is the user's choice.
    config.write_text('[roles."*"]\nmax_tokens = 256\n', encoding="utf-8")
    sent = {
        (r["max_tokens"], r["temperature"], r["seed"]) for r in _requests(tmp_path, capsys, "--config", str(config))
    }
    assert sent == {(256, 0.0, 42)}
