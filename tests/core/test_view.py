"""``voirdire show``: the terminal renderer of the chat model, on real transcripts written by the command."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.web import runs
from voirdire.cli import main
from voirdire.transcript import DisplayHints, load
from voirdire.view import SessionNotFound, render, render_session


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return tmp_path_factory.mktemp("view"), tmp_path_factory.mktemp("scripts")


def test_a_session_as_dialogue_with_costs_failures_and_evidence(folder: tuple[Path, Path]) -> None:
    out = runs.cross_examination(*folder)
    text = render(load(out), session="rome", color=False)
    assert text.startswith("━━ session rome · cross_examination ━━")
    assert "question: What is the capital of Italy?" in text and "gold: Rome | Roma" in text
    assert "── setup ──" in text and "── followup_ask · round 1 ──" in text
    assert "Examinee:  " in text and " tokens · 0." in text  # tokens and latency per reply
    assert "Examiner → Examinee:\n    Where is it?" in text
    assert "!! examiner: could not parse" in text and "treated as No" in text
    assert "Verdict: INCORRECT (rejected)\nevidence:\n    The claim is incorrect." in text
    assert "claim examined:\n    The answer is Paris." in text
    assert text.splitlines()[-1].startswith("6 model calls · examinee 3 calls, ") and "examiner 3 calls" in text
    assert "Please answer the following questions" not in text
    with_prompts = render(load(out), session="rome", prompts=True, color=False)
    assert "Moderator → Examiner [cross_examination/setup_chatgpt]:" in with_prompts
    assert "Please answer the following questions regarding your claim." in with_prompts


def test_majority_examinations_are_named_in_the_dividers(folder: tuple[Path, Path]) -> None:
    runs.cross_examination(*folder)  # writes the scripts the Majority run uses
    text = render(load(runs.majority(*folder)), color=False)
    assert "── e1 · setup ──" in text and "── e3 · decision ──" in text


def test_colours_only_when_asked_and_unknown_sessions_are_named(folder: tuple[Path, Path], capsys) -> None:
    out = runs.no_data(folder[0])
    t = load(out)
    assert "\033[" in render(t, session="seed0-000", color=True)
    assert "\033[" not in render(t, session="seed0-000", color=False)
    with pytest.raises(SessionNotFound, match="no session 'nope'"):
        render(t, session="nope")
    assert main(["show", str(out), "--session", "seed0-000"]) == 0
    shown = capsys.readouterr().out
    assert "Evaluator → Verifier:" in shown and "Verdict: 1 (accepted)" in shown
    assert "verifier's check passed" in shown and "· Algorithm 1 decision · EV protocol passed" in shown


def test_render_session_takes_hints_without_a_header(folder: tuple[Path, Path]) -> None:
    t = load(runs.no_data(folder[0]))
    s = t.sessions["seed0-000"]
    text = render_session(s, protocol="no_data", hints=DisplayHints(item_fields=("x",), quiet_states=("label",)))
    assert text.startswith("━━ session seed0-000 · no_data ━━") and "── label" not in text and "x: " in text
