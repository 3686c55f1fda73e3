"""The command line: batch with resume, show, report, baselines, and clear errors for bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from voirdire.cli import main
from voirdire.transcript import load

from .examination_scripts import EXAMINER, scripted_models


@pytest.fixture
def models(tmp_path: Path) -> list[str]:
    return [arg for role, spec in scripted_models(tmp_path).items() for arg in ("--model", f"{role}={spec}")]


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    path = tmp_path / "qs.jsonl"
    rows = [
        {"id": "a", "question": "What is the capital of France?", "possible_answers": ["Paris"]},
        {"id": "b", "question": "What is the capital of Italy?", "possible_answers": ["Rome", "Roma"]},
        {"id": "c", "question": "Where is the Louvre?", "answers": "Paris|Paris, France"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_batch_report_resume_and_show(tmp_path: Path, models: list[str], dataset: Path, capsys) -> None:
    out = tmp_path / "run.jsonl"
    args = ["examine", "--questions", str(dataset), *models, "--out", str(out), "--no-progress"]
    assert main([*args, "--limit", "2", "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert set(first["verdicts"]) == {"a", "b"} and first["skipped"] == 0
    assert main([*args, "--json", "--report", str(tmp_path / "r.json")]) == 0
    second = json.loads(capsys.readouterr().out)
    assert second["skipped"] == 2 and set(second["verdicts"]) == {"a", "b", "c"}
    report = second["report"]
    # All claims say Paris: a and c are gold-correct, b is not; the examiner rejects all three.
    assert report["claims_correct_pct"] == pytest.approx(200 / 3)
    assert report["reject_incorrect"]["precision"] == pytest.approx(1 / 3)
    assert report["reject_incorrect"]["recall"] == 1.0
    assert report["examination"]["questions"]["mean"] == 1.0
    assert json.loads((tmp_path / "r.json").read_text())["report"]["scored"] == 3

    assert main(["show", str(out), "--session", "b"]) == 0
    chat = capsys.readouterr().out
    assert "Examiner:" in chat and "Examinee:" in chat and "Verdict: INCORRECT (rejected)" in chat
    assert "Where is it?" in chat and "Please answer the following questions" not in chat
    assert main(["show", str(out), "--session", "b", "--prompts"]) == 0
    assert "Please answer the following questions regarding your claim." in capsys.readouterr().out
    assert main(["report", str(out)]) == 0
    assert "reject incorrect" in capsys.readouterr().out
    assert main(["show", str(out), "--list"]) == 0
    assert capsys.readouterr().out.count("incorrect") == 3
    assert main(["show", str(out), "--session", "nope"]) == 2
    assert "no session 'nope'" in capsys.readouterr().err
    assert main(["examine", "X.", *models, "--examinations", "2"]) == 2
    assert "odd" in capsys.readouterr().err


def test_baseline_and_majority_flags(tmp_path: Path, models: list[str], dataset: Path, capsys) -> None:
    ays = ["examine", "--questions", str(dataset), "--baseline", "ays", "--out", str(tmp_path / "ays.jsonl"), "--json"]
    assert main([*ays, *models]) == 2  # the AYS baseline asks only the examinee: an examiner model is not used
    assert (
        "--model examiner=...: ays has no role 'examiner' (its model roles here: examinee)" in capsys.readouterr().err
    )
    assert main([*ays, *models[2:]]) == 0
    out = json.loads(capsys.readouterr().out)
    assert all(v["decision"] == "correct" for v in out["verdicts"].values())
    assert (
        main(["examine", "Paris is in France.", *models, "--majority", "--out", str(tmp_path / "m.jsonl"), "--json"])
        == 0
    )
    (v,) = json.loads(capsys.readouterr().out)["verdicts"].values()
    assert v["accepted"] is False and len(v["statistics"]["examinations"]) == 3


def test_bad_dataset_row_is_named(tmp_path: Path, models: list[str], capsys) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "ok?"}\n{"answers": ["x"]}\n')
    assert main(["examine", "--questions", str(bad), *models]) == 2
    assert f"{bad}:2: needs a 'claim' or a 'question'" in capsys.readouterr().err
    bad.write_text('{"question": "ok?"}\n{oops\n')
    assert main(["examine", "--questions", str(bad), *models]) == 2
    assert f"{bad}:2: not valid JSON" in capsys.readouterr().err


def test_bad_model_spec_and_config_errors(tmp_path: Path, capsys) -> None:
    assert main(["examine", "X.", "--model", "examiner=gpt4"]) == 2
    assert "unknown model spec 'gpt4'" in capsys.readouterr().err
    cfg = tmp_path / "run.toml"
    cfg.write_text('[roles.examiner]\nmodel = "local"\nmax_tokens = -3\n')
    assert main(["examine", "X.", "--config", str(cfg)]) == 2
    assert "[roles.examiner]" in capsys.readouterr().err
    script = tmp_path / "s.yaml"
    script.write_text("rules: [\n")
    assert main(["examine", "X.", "--model", f"scripted:{script}"]) == 2
    assert f"{script}:" in capsys.readouterr().err


def test_bad_settings_roles_paths_and_encodings_are_clear_errors(
    tmp_path: Path, models: list[str], dataset: Path, capsys
) -> None:
    with pytest.raises(SystemExit) as parsed:  # refused by the option's parser, before anything runs
        main(["examine", "X.", *models, "--max-tokens", "0"])
    assert parsed.value.code == 2
    assert "--max-tokens: must be at least 1 (tokens), got 0" in capsys.readouterr().err
    assert main(["examine", "X.", *models, "--model", "examinr=local"]) == 2
    assert "--model examinr=...: cross_examination has no role 'examinr'" in capsys.readouterr().err
    assert main(["examine", "X.", *models, "--out", str(tmp_path)]) == 2
    assert str(tmp_path) in capsys.readouterr().err
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"claim": "ok"}\n{"claim": "caf\xe9"}\n')
    assert main(["examine", "--questions", str(latin), *models]) == 2
    assert f"{latin}:2: not UTF-8" in capsys.readouterr().err
    assert main(["examine", "X.", "--questions", str(dataset), *models]) == 2
    assert "not both" in capsys.readouterr().err


def test_bare_model_rebinds_config_roles_and_the_command_is_recorded(tmp_path: Path, models: list[str]) -> None:
    from voirdire.transcript import load

    cfg = tmp_path / "run.toml"
    cfg.write_text('[roles.examiner]\nmodel = "openai:gpt-4o"\nmax_tokens = 32\n')
    out = tmp_path / "t.jsonl"
    both = tmp_path / "both.yaml"
    both.write_text(EXAMINER + 'default: "Fine."\n')  # one script for both roles
    script = f"scripted:{both}"
    assert main(["examine", "X.", "--config", str(cfg), "--model", script, "--out", str(out), "--json"]) == 0
    header = load(out).header
    assert header is not None and header.roles["examiner"].spec == script and header.roles["examiner"].max_tokens == 32
    assert header.command is not None and header.command[:2] == ["voirdire", "examine"]


def test_run_generic_form_equals_the_friendly_command(tmp_path: Path, models: list[str], dataset: Path, capsys) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    common = ["--questions", str(dataset), *models, "--no-progress", "--json", "--max-followups", "2"]
    assert main(["examine", *common, "--out", str(a)]) == 0
    friendly = json.loads(capsys.readouterr().out)
    assert main(["run", "cross_examination", *common, "--out", str(b)]) == 0
    generic = json.loads(capsys.readouterr().out)
    assert friendly["report"] == {**generic["report"], "transcript": friendly["report"]["transcript"]}
    assert friendly["verdicts"] == generic["verdicts"]
    header = load(b).header
    assert header is not None and header.parameters["max_followup_rounds"] == 2
    assert header.transitions["[*]"] == ["claim", "setup"] and header.display.colors["examiner"] == "36"


def test_report_and_graph_of_a_cross_examination_transcript(
    tmp_path: Path, models: list[str], dataset: Path, capsys
) -> None:
    out = tmp_path / "t.jsonl"
    assert main(["examine", "--questions", str(dataset), *models, "--out", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["report", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    # every claim is gold-correct ("Paris" for Paris questions; "Rome" is not in "The answer is Paris.")
    assert report["sessions"] == 3 and report["verdicts"] == 3 and report["scored"] == 3
    assert report["claims_correct_pct"] == pytest.approx(200 / 3)
    assert report["reject_incorrect"]["recall"] == 1.0  # the examiner rejects everything
    assert main(["show", str(out), "--graph"]) == 0
    graph = capsys.readouterr().out
    assert "stateDiagram-v2" in graph and "followup_ask --> followup_questions" in graph


def test_option_errors_name_the_flag(tmp_path: Path, models: list[str], capsys) -> None:
    assert main(["examine", "x", *models, "--max-followups", "-1", "--out", str(tmp_path / "t.jsonl")]) == 2
    assert capsys.readouterr().err.strip() == (
        "voirdire: error: --max-followups: Input should be greater than or equal to 0"
    )
    assert main(["examine", "x", *models, "--examinations", "2", "--out", str(tmp_path / "t.jsonl")]) == 2
    assert "examinations must be odd" in capsys.readouterr().err


def test_show_into_a_closed_pipe_exits_zero(tmp_path: Path, models: list[str], dataset: Path) -> None:
    out = tmp_path / "t.jsonl"
    assert main(["examine", "--questions", str(dataset), *models, "--out", str(out), "--no-progress"]) == 0
    with out.open("a") as fh:  # a long transcript, so `show` is still writing when the reader leaves
        for i in range(2000):
            fh.write(out.read_text().splitlines()[1].replace('"session_id":"a"', f'"session_id":"x{i}"') + "\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "voirdire.cli", "show", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stdout.readline()
    proc.stdout.close()  # what `| head -1` does
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()
    assert b"Traceback" not in err and b"Exception ignored" not in err
