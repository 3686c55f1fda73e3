"""``voirdire reproduce``: the list of the papers' tables and figures, the offline ones against the numbers the docs
state (EVOUNA lexical rows, No-Data Tables 2 and 3, the Lemma 1 simulation, DCR's ROUGE rows, the oracle–checker's
theorems), and a model reproduction run through a scripted model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.web.runs import ENTAILMENT
from voirdire.analysis.reproduce import reproductions
from voirdire.cli import main
from voirdire.reports.paper_tables import Options, paper_models_note


def reproduce(tmp_path: Path, name: str, *extra: str) -> dict:  # type: ignore[type-arg]
    assert main(["reproduce", name, "--out", str(tmp_path), *extra]) == 0
    return json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8"))


def cell(result: dict, label: str) -> dict:  # type: ignore[type-arg]
    return next(c for c in result["cells"] if c["label"] == label)


def test_list_names_every_table_with_what_it_needs_and_its_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reproduce", "--list"]) == 0
    out = capsys.readouterr().out
    found = reproductions()
    assert len(found) >= 8
    papers = {r.paper for r in found.values()}
    assert len(papers) == 5
    for name, r in found.items():
        assert name in out and r.command in out
    assert out.count("needs: offline") >= 5 and "needs: a model: --model ROLE=SPEC for evaluator" in out


def test_evouna_lexical_rows_all_within_a_tenth(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = reproduce(tmp_path, "evouna-table1-lexical")
    assert (result["within"], result["compared"]) == (20, 20)  # docs/qa_entailment.md: all 20 cells within 0.1
    exact = sum(c["difference"] == pytest.approx(0, abs=1e-9) for c in result["cells"])
    assert exact == 17
    assert cell(result, "EVOUNA-NQ InstructGPT F1")["ours"] == 86.8
    assert (tmp_path / "evouna-table1-lexical-table1-lexical-nq.svg").exists()
    out = capsys.readouterr().out
    assert "EVOUNA-NQ InstructGPT F1" in out and "20 of 20 compared cells within tolerance" in out


def test_oracle_checker_worked_numbers_and_the_bound(tmp_path: Path) -> None:
    result = reproduce(tmp_path, "oracle-theorems", "--limit", "500")
    assert (result["within"], result["compared"]) == (2, 2)  # 0.936 and 0.765 (docs/oracle_checker.md)
    assert result["details"]["exceeding"] == 0
    assert (tmp_path / "oracle-theorems-acceptance-vs-epsilon.svg").exists()


@pytest.mark.paper
def test_no_data_table2_as_the_docs_state(tmp_path: Path) -> None:
    result = reproduce(tmp_path, "nodata-table2", "--no-figures")
    # docs/no_data.md, Table 2 (10 seeds): IP known 62.2 / 59.8 (✗ −1.0), OOP unknown (φ = 0.5) 4.4 / 48.6, 51.9 / 51.3
    ip_f1 = cell(result, "IP known: F1")
    assert round(ip_f1["ours"], 1) == 59.8 and ip_f1["within"] is False
    for metric, value in (("successes", 4.4), ("flips", 48.6), ("accuracy", 51.9), ("F1", 51.3)):
        got = cell(result, f"OOP unknown (φ = 0.5, as run): {metric}")
        assert round(got["ours"], 1) == value and got["within"] is True
    assert round(cell(result, "OOP unknown (φ = 0.6, Table 2 caption): flips")["ours"], 1) == 57.8
    assert not list(tmp_path.glob("*.svg"))


@pytest.mark.paper
def test_no_data_table3_tally_as_the_docs_state(tmp_path: Path) -> None:
    result = reproduce(tmp_path, "nodata-table3", "--no-figures")
    # docs/no_data.md: "Published values reproduced: paper reading 30/56, notebook reading 50/56"
    assert result["details"]["agreement"]["ours_paper_reading"] == {"agree": 30, "of": 56}
    assert result["details"]["agreement"]["ours_notebook_reading"] == {"agree": 50, "of": 56}


@pytest.mark.paper
def test_no_data_lemma1_simulation_as_the_docs_state(tmp_path: Path) -> None:
    result = reproduce(tmp_path, "nodata-lemma1")
    # docs/no_data.md: at r = 3, 4 of 8 liars that do not know C̄ survive significantly more often than (1/4)^3
    assert sorted(result["details"]["above_at_r3"]) == sorted(
        ["ip:ch2-cheater", "ip:lie-sigma", "ip:lie-sigma-permutation", "oop:lie-sigma-permutation"]
    )
    assert round(cell(result, "IP lie-sigma r=3: undetected (%)")["ours"], 1) == 64.6
    assert (tmp_path / "nodata-lemma1-lemma1-ip.svg").exists()


@pytest.mark.paper
def test_dcr_rouge_rows_13_of_16_within_0005(tmp_path: Path) -> None:
    result = reproduce(tmp_path, "dcr-tables2-4-rouge", "--no-figures")
    assert (result["within"], result["compared"]) == (13, 16)  # docs/dcr.md
    missed = {c["label"] for c in result["cells"] if c["within"] is False}
    assert missed == {"QAGS-XSUM ROUGE-L r", "QAGS-XSUM ROUGE-L ρ", "QAGS-XSUM ROUGE-L τ"}


def test_a_model_reproduction_needs_its_model(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["reproduce", "evouna-table1-entailment", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "needs a model for evaluator" in err
    assert main(["reproduce", "no-such-table"]) == 2
    assert "unknown reproduction 'no-such-table'" in capsys.readouterr().err


def test_a_model_reproduction_runs_its_command_with_the_bound_model(tmp_path: Path) -> None:
    script = tmp_path / "evaluator.yaml"
    script.write_text(ENTAILMENT, encoding="utf-8")
    result = reproduce(tmp_path, "evouna-table1-entailment", "--model", f"evaluator=scripted:{script}", "--limit", "2")
    assert result["compared"] == 0  # shown beside the paper's, never judged
    assert cell(result, "EVOUNA-NQ DPR-FiD F1")["paper"] == 94.8
    assert any("gpt-3.5-turbo-1106" in n and "not judged" in n for n in result["notes"])
    assert (tmp_path / "transcripts" / "evouna-nq-entailment.jsonl").exists()


def test_the_embedded_model_is_said_not_to_stand_in_for_the_papers() -> None:
    note = paper_models_note("GPT-4", Options(models={"*": "local"}))
    assert "cannot stand in for GPT-3.5/4" in note
    assert "cannot stand in" not in paper_models_note("GPT-4", Options(models={"*": "openai:gpt-4"}))
