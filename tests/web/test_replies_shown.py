"""Replies shown as they were, in the terminal, the viewer and the export: a call that drew k samples is one bubble
of k samples, each with its own parse failure; a structured reply that came as plain text says what was asked for;
a reply cut off at the token limit is marked; a person's prompt comes after the turn it answers; the terminal chat
and its tables wrap at the terminal's width, never inside a word."""

from __future__ import annotations

import io
import re
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.web import runs
from voirdire.chat.terminal import render
from voirdire.chat.turns import Bubble, Failure, chat_of
from voirdire.cli import main
from voirdire.transcript import (
    Message,
    ModelCall,
    RoleBinding,
    RunHeader,
    SessionStart,
    TokenUsage,
    TranscriptWriter,
    Verdict,
    load,
)
from voirdire.web.export import export_file
from voirdire.web.server import Viewer


@pytest.fixture(scope="module")
def sampled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return runs.sampled_entities(tmp_path_factory.mktemp("sampled"))


def first_extraction(path: Path) -> Bubble:
    t = load(path)
    (session,) = t.sessions.values()
    chat = chat_of(session, t.header)
    return next(b for b in chat.turns if isinstance(b, Bubble) and b.kind == "reply" and b.sender == "oracle")


def test_a_call_of_eleven_samples_is_one_bubble_with_each_failure_on_its_sample(sampled: Path) -> None:
    t = load(sampled)
    (session,) = t.sessions.values()
    chat = chat_of(session, t.header)
    bubble = first_extraction(sampled)
    assert [s.number for s in bubble.samples] == list(range(1, 12))
    assert [s.number for s in bubble.samples if s.failure is not None] == [4, 8]
    assert "sample 4" in bubble.samples[3].text and bubble.samples[3].failure.raw == bubble.samples[3].text  # type: ignore[union-attr]
    assert bubble.sample_summary() == "11 samples, 3 distinct, 2 unreadable"
    assert [g.label for g in bubble.sample_groups()] == ["samples 1–3, 5–7, 9–11", "sample 4", "sample 8"]
    # no loose bubble and no failure outside its sample: every oracle reply of the session is a k-sample bubble
    replies = [b for b in chat.turns if isinstance(b, Bubble) and b.kind == "reply" and b.sender == "oracle"]
    assert all(len(b.samples) == b.call.samples > 1 for b in replies)  # type: ignore[union-attr]
    assert not any(isinstance(x, Failure) for x in chat.turns)


def test_the_terminal_shows_the_samples_with_their_failures(sampled: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    text = render(load(sampled), color=False)
    assert "11 samples, 3 distinct, 2 unreadable" in text
    block = text[text.index("×9 (samples 1–3, 5–7, 9–11)") :]
    four, eight = block.index("×1 (sample 4)"), block.index("×1 (sample 8)")
    assert block.index("(sample 4).") < block.index("!! oracle: could not parse", four) < eight
    assert block.index("!! oracle: could not parse", eight) > eight
    assert max(len(line) for line in text.splitlines()) <= 80


def test_the_viewer_and_the_export_show_the_samples_with_their_failures(sampled: Path, tmp_path: Path) -> None:
    import urllib.request

    sid = next(iter(load(sampled).sessions))
    viewer = Viewer([sampled], port=0).start()
    try:
        with urllib.request.urlopen(viewer.url + f"run/{sampled.name}/session/{sid}") as r:
            page = r.read().decode()
    finally:
        viewer.stop()
    exported = export_file(sampled, tmp_path / "x.html").read_text(encoding="utf-8")
    for html in (page, exported):
        first = html[html.index('<ol class="samples"') : html.index("</ol>")]
        assert "11 samples, 3 distinct, 2 unreadable" in html
        assert first.count('class="sample unreadable"') == 2 and first.count('class="sample"') == 1
        failed = r"sample 4</div><div class=\"text\">I am not sure[^<]*</div>\s*<div class=\"sample-failure\""
        assert re.search(failed, first)
        assert 'class="turn failure"' not in html  # no failure loose in the chat


def test_a_structured_refusal_says_what_was_asked_for(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    examiner = tmp_path / "examiner.yaml"
    examiner.write_text(runs.EXAMINER.replace("Perhaps.", "No"), encoding="utf-8")
    examinee = tmp_path / "examinee.yaml"
    examinee.write_text(runs.EXAMINEE, encoding="utf-8")
    out = tmp_path / "s.jsonl"
    runs.run("examine", "--question", "What is the capital of France?", "--structured", "--out", str(out), "--json",
             "--model", f"examiner=scripted:{examiner}", "--model", f"examinee=scripted:{examinee}")  # fmt: skip
    capsys.readouterr()
    t = load(out)
    (session,) = t.sessions.values()
    failures = [x for x in chat_of(session, t.header).turns if isinstance(x, Failure)]
    assert failures and all(f.enforcement == "validated" for f in failures)
    assert failures[-1].summary.startswith('expected JSON {"answer": …} (') and "got plain text" in failures[-1].summary
    assert 'could not parse (expected JSON {"answer": …}' in render(t, color=False)


def cut_off_transcript(path: Path) -> Path:
    """A reply that ended at the token limit, as a provider reports it (``finish_reason: length``)."""
    base = {"run_id": "r", "session_id": "s", "time": datetime(2026, 1, 1, tzinfo=UTC)}
    with TranscriptWriter(path) as w:
        w.write(RunHeader(run_id="r", protocol="toy", roles={"judge": RoleBinding(spec="openai:gpt-4o-mini")}))
        for e in (
            SessionStart(**base, seq=1, item_id="x", item={"text": "t"}),
            Message(**base, seq=2, sender="moderator", receiver="judge", content="Explain."),
            ModelCall(
                **base, seq=3, role="judge", model="gpt-4o-mini", request_digest="d", response="Because the",
                usage=TokenUsage(prompt_tokens=5, completion_tokens=3), latency_s=0.2, finish_reason="length",
            ),
            Message(**base, seq=4, sender="judge", receiver="moderator", content="Because the"),
            Verdict(**base, seq=5, decision="unknown"),
        ):
            w.write(e)
    return path


def test_a_cut_off_reply_is_marked_in_the_terminal_and_the_viewer(tmp_path: Path) -> None:
    path = cut_off_transcript(tmp_path / "cut.jsonl")
    assert "Judge:  5+3 tokens · 0.20 s · cut off at the token limit (finish_reason: length)" in render(
        load(path), color=False
    )
    html = export_file(path, tmp_path / "cut.html").read_text(encoding="utf-8")
    assert 'class="warn cut-off">cut off at the token limit (finish_reason: length)' in html


def test_a_person_is_asked_after_the_turn_they_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    examiner = tmp_path / "examiner.yaml"
    examiner.write_text(runs.EXAMINER.replace("Perhaps.", "No"), encoding="utf-8")
    both = io.StringIO()  # the live chat (stdout) and the person's prompts (stderr), in the order written
    monkeypatch.setattr(sys, "stdin", io.StringIO("Paris is the capital.\n\nIn France.\n\nLong ago.\n\n"))
    monkeypatch.setattr(sys, "stdout", both)
    monkeypatch.setattr(sys, "stderr", both)
    code = main(["examine", "--question", "What is the capital of France?", "--max-followups", "0", "--follow",
                 "--model", f"examiner=scripted:{examiner}", "--model", "examinee=human",
                 "--out", str(tmp_path / "h.jsonl"), "--no-progress"])  # fmt: skip
    text = both.getvalue()
    assert code == 0, text
    assert text.index("── claim ──") < text.index("your turn")
    for question in ("Where is it?", "When was it founded?"):
        shown = text.index(f"Examiner → Examinee:\n    {question}")
        ask = "[examiner · answer this]\n  Please answer the following questions regarding your claim.\n  "
        asked = text.index(ask + question)
        assert shown < asked, f"{question!r} asked before it was on the screen:\n{text}"
