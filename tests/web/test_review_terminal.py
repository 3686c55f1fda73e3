"""``voirdire review T --sample 5`` under a pseudo-terminal: the name asked once, each chat shown, a/d/u answered at
the prompt, five labels of calibrate's sample written; a second pass skips what is labelled."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

from tests.web.test_review_app import scripted_review_run
from voirdire.certificate import read_run, sample_lines
from voirdire.transcript import read_sidecar

PROMPT = r"a agree, d disagree, u unsure, s skip, q quit> "


@pytest.fixture(scope="module")
def transcript(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scripted_review_run(tmp_path_factory.mktemp("review-terminal"))


class Terminal:
    """A command on a pseudo-terminal (the standard library's ``pty``): wait for text, type a line."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "NO_COLOR": "1", "COLUMNS": "100"}
        self.master, slave = pty.openpty()
        self.process = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env,
                                        close_fds=True)  # fmt: skip
        os.close(slave)
        self.seen = ""

    def expect_exact(self, text: str, bound: float = 120) -> None:
        """Read until ``text`` appears after what was matched before (``bound``: seconds to give up after, a
        bound on a hung command, not a measure)."""
        while text not in self.seen:
            ready, _, _ = select.select([self.master], [], [], bound)
            if not ready:
                raise AssertionError(f"no {text!r} on the terminal; it shows: {self.seen[-2000:]!r}")
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # the command ended and closed the terminal
                chunk = b""
            if not chunk:
                raise AssertionError(f"the command ended before {text!r}; it showed: {self.seen[-2000:]!r}")
            self.seen += chunk.decode("utf-8", "replace")
        self.seen = self.seen[self.seen.index(text) + len(text) :]

    def sendline(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def wait(self) -> int:
        code = self.process.wait(timeout=120)
        os.close(self.master)
        return code


def spawn(transcript: Path, cwd: Path, *extra: str) -> Terminal:
    args = [sys.executable, "-m", "voirdire", "review", str(transcript), "--sample", "5", "--seed", "7", *extra]
    return Terminal(args, cwd)


def test_review_at_the_terminal_writes_five_labels(transcript: Path, tmp_path: Path) -> None:
    child = spawn(transcript, tmp_path)
    child.expect_exact("your name")
    child.sendline("tess")
    child.expect_exact("0 / 5 of --sample 5 --seed 7 labelled by tess")
    answers = ["a", "d", "u", "a", "a"]
    for n, answer in enumerate(answers, start=1):
        child.expect_exact(f"[{n} / 5] item")
        child.expect_exact(PROMPT)
        if n == 1:
            child.sendline("x")  # not an answer: asked again
            child.expect_exact("answer a, d, u, s or q")
            child.expect_exact(PROMPT)
        child.sendline(answer)
        child.expect_exact("comment (Enter for none)> ")
        child.sendline("second look" if n == 2 else "")
        child.expect_exact("saved: ")
    child.expect_exact("items labelled by 1 annotator")
    assert child.wait() == 0
    labels = read_sidecar(transcript)
    drawn = [x["item_id"] for x in sample_lines(read_run(transcript), 5, 7)]
    assert [x.item_id for x in labels] == drawn
    assert [x.reading for x in labels] == ["agree", "disagree", "unsure", "agree", "agree"]
    assert labels[1].comment == "second look" and labels[1].label not in (None, labels[1].verdict)
    assert all(x.annotator == "tess" and x.sample is not None and x.sample.seed == 7 for x in labels)

    again = spawn(transcript, tmp_path, "--annotator", "tess")
    again.expect_exact("5 / 5 of --sample 5 --seed 7 labelled by tess")
    assert again.wait() == 0 and len(read_sidecar(transcript)) == 5
