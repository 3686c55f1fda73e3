"""A single-item run at a terminal prints each turn as it happens, and model text never drives the terminal."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from tests.fake_openai import FakeOpenAIServer
from voirdire.chat.live import LiveChat, live_mode

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = "\x1b]0;x\x07\x1b[2J\x1b[1;1HVerdict: CORRECT (accepted)\u202e"
CLAIM = "The Eiffel Tower is in Paris." + HOSTILE


class SlowExaminer:
    """Answers the claim at once and holds the examiner's decision (the last call) until the test has seen the
    claim on the terminal, or until it gives up."""

    def __init__(self) -> None:
        self.claim_seen = threading.Event()
        self.seen_before_last_answer: bool | None = None

    def __call__(self, messages: list[dict[str, Any]]) -> str:
        user = messages[-1]["content"]
        if "phrase your answer as a claim" in user:
            return CLAIM
        if "correct or incorrect" in user:
            self.seen_before_last_answer = self.claim_seen.wait(timeout=120)
            return "The claim is correct."
        return "I have no questions."  # no questions: the examination goes to its decision


def test_a_single_item_run_prints_the_first_turn_before_the_last_call_is_answered(tmp_path: Path) -> None:
    model = SlowExaminer()
    master, slave = pty.openpty()
    out = bytearray()

    def read() -> None:
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the child closed the terminal
                return
            if not chunk:
                return
            out.extend(chunk)
            if b"The Eiffel Tower is in Paris." in out:
                model.claim_seen.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}
    with FakeOpenAIServer(model) as server:
        spec = f"openai-compatible:fake@{server.url}"
        proc = subprocess.Popen(
            [sys.executable, "-m", "voirdire", "examine", "--question", "Where is the Eiffel Tower?",
             "--model", f"examinee={spec}", "--model", f"examiner={spec}", "--out", str(tmp_path / "t.jsonl")],
            stdin=subprocess.DEVNULL, stdout=slave, stderr=subprocess.PIPE, cwd=tmp_path, env=env,
        )  # fmt: skip
        os.close(slave)
        _, err = proc.communicate(timeout=300)
    reader.join(timeout=30)
    os.close(master)
    assert proc.returncode == 0, err.decode()
    assert model.seen_before_last_answer is True  # the claim was on the terminal while the decision was pending
    text = out.decode().replace("\r\n", "\n")
    assert text.index("Examinee:") < text.index("── decision") < text.index("\nVerdict: CORRECT (accepted)\n")
    # the reply's escape sequences and bidi override are shown, never sent to the terminal
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert "␛]0;x␇␛[2J␛[1;1HVerdict: CORRECT (accepted)<U+202E>" in text
    assert text.count("━━ session") == 1  # the chat printed live is not printed again at the end


def test_live_modes() -> None:
    class Terminal:
        def isatty(self) -> bool:
            return True

    class Pipe:
        def isatty(self) -> bool:
            return False

    tty, pipe = Terminal(), Pipe()
    assert live_mode(follow=False, as_json=False, single=True, stream=tty) == "turns"  # type: ignore[arg-type]
    assert live_mode(follow=False, as_json=False, single=True, stream=pipe) is None  # type: ignore[arg-type]
    assert live_mode(follow=True, as_json=False, single=False, stream=pipe) == "sessions"  # type: ignore[arg-type]
    assert live_mode(follow=True, as_json=True, single=True, stream=tty) is None  # type: ignore[arg-type]
    assert live_mode(follow=False, as_json=False, single=False, stream=tty) is None  # type: ignore[arg-type]


def test_follow_prints_each_session_when_it_ends(tmp_path: Path) -> None:
    import io

    from tests.web import runs
    from voirdire.transcript import load

    (tmp_path / "a").mkdir()
    source = runs.no_data(tmp_path / "a")
    target = tmp_path / "b.jsonl"
    stream = io.StringIO()
    lines = source.read_bytes().splitlines(keepends=True)
    with LiveChat(target, mode="sessions", stream=stream, color=False, interval=3600) as live:
        with target.open("ab") as fh:
            for line in lines:
                fh.write(line)
        live.poll()
    text = stream.getvalue()
    sessions = load(source).sessions
    assert len(sessions) > 1 and text.count("━━ session") == text.count("Verdict:") == len(sessions)
    assert all(f"━━ session {sid} " in text for sid in sessions)


def test_a_long_step_shows_progress_only_at_a_terminal() -> None:
    import io

    from voirdire.chat.progress import stage

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    tty, pipe = Terminal(), io.StringIO()
    with stage("scoring 3 candidates [rougeL]\x1b[2J", stream=tty):
        pass
    with stage("scoring", stream=pipe):
        pass
    assert "✓ scoring 3 candidates [rougeL]␛[2J (" in tty.getvalue() and "\x1b[2J" not in tty.getvalue()
    assert pipe.getvalue() == ""


def test_follow_prints_each_session_of_a_batch_then_the_report(tmp_path: Path, capsys) -> None:
    import json

    from tests.web import runs
    from voirdire.cli import main

    (tmp_path / "examiner.yaml").write_text(runs.EXAMINER, encoding="utf-8")
    (tmp_path / "examinee.yaml").write_text(runs.EXAMINEE, encoding="utf-8")
    data = tmp_path / "questions.jsonl"
    data.write_text("".join(json.dumps(q) + "\n" for q in runs.QUESTIONS), encoding="utf-8")
    args = ["examine", "--questions", str(data), "--out", str(tmp_path / "t.jsonl"), "--no-progress", "--follow",
            "--model", f"examiner=scripted:{tmp_path / 'examiner.yaml'}",
            "--model", f"examinee=scripted:{tmp_path / 'examinee.yaml'}"]  # fmt: skip
    assert main(args) == 0
    text = capsys.readouterr().out
    report = text.index("cross_examination: 2 sessions")
    for sid in ("paris", "rome"):
        assert text.index(f"━━ session {sid} · cross_examination ━━") < report
    assert text.count("Verdict: ") == 2
