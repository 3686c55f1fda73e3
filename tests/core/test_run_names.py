"""Default transcript names and the refusal to mix runs: two commands on the same data with another parameter or
model get their own transcripts; a transcript given with ``--out`` that holds another run is refused by the
option that differs, in the command line's words; ``--concurrency``'s default follows the roles' models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voirdire.cli import main
from voirdire.cli.run import default_concurrency
from voirdire.models import RoleSettings
from voirdire.registry.plugins import registrations

from .examination_scripts import scripted_models


@pytest.fixture
def models(tmp_path: Path) -> list[str]:
    return [arg for role, spec in scripted_models(tmp_path).items() for arg in ("--model", f"{role}={spec}")]


@pytest.fixture
def dataset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "qs.jsonl"
    path.write_text(json.dumps({"id": "a", "question": "What is the capital of France?", "answers": ["Paris"]}) + "\n")
    return path


def examine(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, object], str]:
    code = main(["examine", *args, "--no-progress", "--json"])
    captured = capsys.readouterr()
    return code, (json.loads(captured.out) if code == 0 else {}), captured.err


def test_another_parameter_or_model_gets_its_own_transcript(
    dataset: Path, models: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, first, _ = examine(capsys, "--questions", "qs.jsonl", *models)
    assert code == 0 and str(first["transcript"]).startswith("transcripts/cross_examination-qs-")
    code, other, _ = examine(capsys, "--questions", "qs.jsonl", *models, "--max-followups", "2")
    assert code == 0 and other["transcript"] != first["transcript"] and other["skipped"] == 0
    code, warmer, _ = examine(capsys, "--questions", "qs.jsonl", *models, "--temperature", "0.5")
    assert code == 0 and warmer["transcript"] not in (first["transcript"], other["transcript"])
    code, again, _ = examine(capsys, "--questions", "qs.jsonl", *models)  # the same command resumes its own
    assert code == 0 and again["transcript"] == first["transcript"] and again["skipped"] == 1


def test_a_refusal_names_the_option_in_command_line_words(
    dataset: Path, models: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    out = "transcripts/x.jsonl"
    assert examine(capsys, "--questions", "qs.jsonl", *models, "--out", out)[0] == 0
    code, _, err = examine(capsys, "--questions", "qs.jsonl", *models, "--out", out, "--max-followups", "2")
    assert code == 2
    assert "--max-followups: 5 in transcripts/x.jsonl, 2 now; use --out or --fresh" in err
    code, _, err = examine(capsys, "--questions", "qs.jsonl", *models, "--out", out, "--temperature", "0.5")
    assert code == 2 and "--temperature (role examinee): 0 in transcripts/x.jsonl, 0.5 now; use --out or --fresh" in err
    code, _, err = examine(capsys, "--questions", "qs.jsonl", *models, "--out", out, "--structured")
    assert code == 2 and "--structured (role examinee): off in transcripts/x.jsonl, on now" in err
    Path("other.jsonl").write_text(dataset.read_text())
    code, _, err = examine(capsys, "--questions", "other.jsonl", *models, "--out", out)
    assert code == 2 and "--questions: qs.jsonl in transcripts/x.jsonl, other.jsonl now; use --out or --fresh" in err
    answers = examine(capsys, "--questions", "qs.jsonl", *models, "--out", out, "--answers", "independent")[2]
    assert "--answers: in_turn in transcripts/x.jsonl, independent now" in answers
    for said in (err, answers):
        assert "(out=)" not in said and "fresh=True" not in said and "{" not in said
    assert examine(capsys, "--questions", "qs.jsonl", *models, "--out", out, "--max-followups", "2", "--fresh")[0] == 0


def test_another_model_is_named_by_its_role(
    dataset: Path, models: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = "transcripts/y.jsonl"
    assert examine(capsys, "--questions", "qs.jsonl", *models, "--out", out)[0] == 0
    moved = tmp_path / "copy.yaml"
    examiner = next(a.split("=", 1)[1] for a in models if a.startswith("examiner="))
    moved.write_text(Path(examiner.removeprefix("scripted:")).read_text())
    swapped = [a if not a.startswith("examiner=") else f"examiner=scripted:{moved}" for a in models]
    code, _, err = examine(capsys, "--questions", "qs.jsonl", *swapped, "--out", out)
    assert code == 2 and f"--model examiner=...: {examiner} in transcripts/y.jsonl, scripted:{moved} now" in err


def test_concurrency_defaults_to_ten_for_remote_endpoints_and_one_here() -> None:
    protocol = registrations()["cross_examination"].protocol()
    remote = RoleSettings(model="openai-compatible:m@http://127.0.0.1:9/v1")
    assert default_concurrency(protocol, {"*": remote}) == 10
    assert default_concurrency(protocol, {"*": RoleSettings(model="openai:gpt-4o-mini")}) == 10
    assert default_concurrency(protocol, {}) == 1  # an unbound role plays on the embedded model
    assert default_concurrency(protocol, {"examiner": remote}) == 1  # the examinee is still the embedded model
    assert default_concurrency(protocol, {"*": remote, "examinee": RoleSettings(model="human")}) == 1
    assert default_concurrency(protocol, {"*": RoleSettings(model="scripted:s.yaml")}) == 1


def test_help_prints_the_concurrency_default(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["examine", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "sessions at a time (default 10 when every model role is a remote endpoint" in text
    assert "1 when a role runs on the embedded model" in text


def test_the_python_api_names_runs_by_their_parameters_too(dataset: Path, tmp_path: Path) -> None:
    import voirdire

    models = scripted_models(tmp_path)
    one, _ = voirdire.run_dataset("cross_examination", dataset, models=models)
    two, _ = voirdire.run_dataset("cross_examination", dataset, models=models, max_followup_rounds=2)
    again, _ = voirdire.run_dataset("cross_examination", dataset, models=models)
    assert one.out != two.out and again.out == one.out and again.skipped == 1
