"""Every run command's summary says how far its numbers rest on replies the model really gave (issue 26): parse
failures and errors printed the same way after the protocol's numbers, and a warning when most replies of a role
were unreadable, so the numbers are the protocol's fallbacks (No-Data: App. D.2's random label), not the model's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voirdire.cli import main
from voirdire.registry import get


@pytest.fixture
def small(shared_data: Path, tmp_path: Path, monkeypatch) -> Path:
    root = shared_data / "no_data_algorithm"
    monkeypatch.setenv("VOIRDIRE_NO_DATA_DIR", str(root))
    rows = json.loads((root / "other_data_test_with_xor.json").read_text())[:4]
    path = tmp_path / "other_small.json"
    path.write_text(json.dumps(rows))
    return path


def _nodata(small: Path, tmp_path: Path, reply: str, *extra: str) -> list[str]:
    script = tmp_path / "evaluator.json"
    script.write_text(json.dumps({"default": reply}))
    return [
        "nodata", "--data", str(small), "--rubric", "oop", "--evaluator", "llm", "--rounds", "1",
        "--model", f"evaluator=scripted:{script}", "--out", str(tmp_path / "t.jsonl"), "--no-progress", *extra,
    ]  # fmt: skip


def test_nodata_llm_whose_replies_are_all_unreadable_says_its_numbers_are_fallbacks(
    small: Path, tmp_path: Path, capsys
) -> None:
    assert main(_nodata(small, tmp_path, "Let me think about the rubric first.")) == 0
    lines = capsys.readouterr().out.splitlines()
    numbers = next(i for i, line in enumerate(lines) if "accuracy" in line)
    failures = next(i for i, line in enumerate(lines) if line.startswith("parse failures: "))
    warning = next(i for i, line in enumerate(lines) if line.startswith("warning: most replies were unreadable"))
    tokens = next(i for i, line in enumerate(lines) if line.startswith("tokens: "))
    assert numbers < failures < warning < tokens  # next to the numbers it qualifies, before tokens and cost
    assert "evaluator · no_data/evaluate 20/20 (100%)" in lines[failures]
    assert "evaluator · no_data/evaluate 20 of 20" in lines[warning] and "not on the model's answers" in lines[warning]


def test_the_same_in_json_and_no_warning_for_replies_that_were_read(small: Path, tmp_path: Path, capsys) -> None:
    assert main(_nodata(small, tmp_path, "Let me think about the rubric first.", "--json")) == 0
    payload = json.loads(capsys.readouterr().out)
    assert "no_data/evaluate" in payload["fallback_warning"] and payload["errors"] == {}
    assert payload["parse_failures"]["evaluator · no_data/evaluate"] == 20
    readable = tmp_path / "readable"
    readable.mkdir()
    assert main(_nodata(small, readable, "|label|\n1\n|label|", "--json")) == 0
    payload = json.loads(capsys.readouterr().out)
    assert "evaluator · no_data/evaluate" not in payload["parse_failures"]  # every label was read
    assert "no_data/evaluate" not in payload.get("fallback_warning", "")


def test_every_run_command_ends_with_the_shared_lines() -> None:
    """Each registered protocol's summary goes through the shared one (the protocol prints only its numbers)."""
    from voirdire.registry import registrations

    for name in registrations():
        assert getattr(get(name).cli.summarize, "reliability", False), name
