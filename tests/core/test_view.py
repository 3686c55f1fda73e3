"""``voirdire show``: the terminal renderer of the chat model, on real transcripts written by the command."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.web import runs
from voirdire.chat.terminal import SessionNotFound, render, render_session
from voirdire.cli import main
from voirdire.transcript import DisplayHints, load


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
    # right vs gold: the report's gold (LMvLM's alias match: Paris is not Rome), as the viewer's badge says it
    assert "Verdict: INCORRECT (rejected)\nright vs gold\nevidence:\n    The claim is incorrect." in text
    assert "vs gold" not in render(load(out), session="rome", color=False, gold=False)  # what `review` shows
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
    assert "Evaluator → Verifier:" in shown and "Verdict: LABEL 1 (accepted)" in shown
    assert "verifier's check passed" in shown and "· Algorithm 1 decision · EV protocol passed" in shown


def test_render_session_takes_hints_without_a_header(folder: tuple[Path, Path]) -> None:
    t = load(runs.no_data(folder[0]))
    s = t.sessions["seed0-000"]
    text = render_session(s, protocol="no_data", hints=DisplayHints(item_fields=("x",), quiet_states=("label",)))
    assert text.startswith("━━ session seed0-000 · no_data ━━") and "── label" not in text and "x: " in text


def test_dcr_reads_as_tables_and_a_diff_without_dumps(folder: tuple[Path, Path]) -> None:
    text = render(load(runs.dcr(*folder)), color=False)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 200
    assert not any(dump in text for dump in ("{'", "[{", '{"', "': ", "=[", "={"))  # no dict or JSON dumps
    assert "· DCE · reasons, round 0 · evaluator: consistent no · sentences no reason is about #3" in text
    row = next(line for line in lines if "Bolt trains in Kingston ." in line and "not evaluated" in line)
    assert "not marked" in row  # the sentence no reason is about, visible as such
    assert next(line for line in lines if line.startswith("  2  Bolt is the iaaf/btc")).split()[-2:] == ["−1", "#2"]
    assert "[-Bolt-] {+Garth Gayle+} is the [-iaaf/btc-] {+JAAA+} general secretary" in text
    assert "Ẑ by round 0.333 → 0.667" in text


def test_the_linearity_tests_show_their_vectors_and_the_guarantee(tmp_path: Path) -> None:
    text = render(load(runs.entities(tmp_path)), color=False)
    assert "{'" not in text and '{"x"' not in text  # the checker's draws are folded into the test cards
    assert "· linearity test 1 · x 000 · y 010 · x ⊕ y 010 · f(x ⊕ y) = f(x) ⊖ f(y) passed" in text
    assert "P(f is ε-close to a homomorphism), Theorems 3.1/3.2" in text and "0.746" in text


def test_escapes_and_bidi_overrides_never_reach_the_terminal(folder: tuple[Path, Path], capsys) -> None:
    out = runs.escapes(*folder)
    capsys.readouterr()
    assert main(["show", str(out)]) == 0
    shown = capsys.readouterr().out
    for raw in ("\x1b", "\x07", "\u202e", "\x00"):
        assert raw not in shown
    assert "Paris␛]0;x␇␛[2J␛[1;1HVerdict: CORRECT (accepted)<U+202E>" in shown and "␀" in shown
    assert "\x1b" in render(load(out), color=True)  # our own colours still pass


def test_a_reply_of_megabytes_without_a_space_wraps_in_linear_time() -> None:
    from voirdire.chat.terminal import wrap

    lines = wrap("x" * 2_000_000, 100)
    assert len(lines) == 20_000 and {len(line) for line in lines} == {100}
    assert wrap("a bb " + "c" * 250 + " d", 100) == ["a bb", "c" * 100, "c" * 100, "c" * 50 + " d"]


def test_the_no_checker_shows_its_triangular_evidence(tmp_path: Path) -> None:
    text = render(load(runs.paraphrase_no(tmp_path)), color=False)
    assert "triangular evidence: p Profit at the company rose sharply in the spring." in text
    assert "── coin · round 1 ──" in text  # a dot in the stage "coin toss 1/1 (Fig. 4)" names no lane
    assert "oracle agreed" in text and "category ĀĪ" in text
