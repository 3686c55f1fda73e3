"""A run's per-session options are carried to the executors as one object (``SessionOptions``) that ``RunOptions``
derives, and ``--concurrency`` is checked by the one rule the run itself applies."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

import voirdire
from voirdire.cli import main
from voirdire.executors import RunSetupError, SessionOptions
from voirdire.runner import RunOptions


def test_run_options_derive_the_session_options() -> None:
    opts = RunOptions(concurrency=4, cache=Path("c.jsonl"), keep_verdicts=False, coalesce=False, session_timeout=9)
    assert opts.sessions == SessionOptions(Path("c.jsonl"), 4, keep_verdicts=False, coalesce=False, session_timeout=9)
    assert pickle.loads(pickle.dumps(opts.sessions)) == opts.sessions  # as worker processes receive it
    assert voirdire.RunOptions is RunOptions


@pytest.mark.parametrize(
    ("options", "message"),
    [({"concurrency": 0}, r"concurrency must be at least 1 \(sessions at a time\), got 0"),
     ({"concurrency": 10**8}, r"concurrency must be at most 4,096 \(sessions at a time\)"),
     ({"repeats": 10**9}, r"repeats must be at most 1,000 \(sessions per item\)"),
     ({"session_timeout": -1.0}, "session_timeout must be a positive number of seconds"),
     ({"session_timeout": float("inf")}, "session_timeout must be a finite number of seconds")],
)  # fmt: skip
def test_one_rule_refuses_what_cannot_run(options: dict[str, float], message: str) -> None:
    with pytest.raises(RunSetupError, match=message):
        SessionOptions(**options).check()  # type: ignore[arg-type]
    with pytest.raises(RunSetupError, match=message):
        RunOptions(**options).check()


def test_the_command_line_names_the_option_with_the_same_rule(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["examine", "--questions", "qs.jsonl", "--concurrency", "0"])
    assert "--concurrency: must be at least 1 (sessions at a time), got 0" in capsys.readouterr().err
