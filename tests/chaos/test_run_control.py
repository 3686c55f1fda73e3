"""A run gone bad stops (--max-errors) and resumes; failed sessions set the exit status; warnings are shown once,
when they first occur; the transcript lock is removed while held, and a stale handle on it is never trusted."""

from __future__ import annotations

import fcntl
import io
import json
import sys
from pathlib import Path

import pytest

from tests.chaos.conftest import questions
from tests.chaos.protocol import replies
from tests.chaos.server import ChaosServer, at_rates
from voirdire.cli import main
from voirdire.runner import ErrorBudget, ResumeError, _exclusive, _same_file
from voirdire.transcript import SessionStart, load, read_lines


def always(fault: str) -> object:
    return lambda index, body: fault


def test_max_errors_stops_the_run_and_a_rerun_resumes(
    chaos_cli: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, out = questions(tmp_path / "qs.jsonl", 20), tmp_path / "t.jsonl"
    state = {"fault": "500"}
    with ChaosServer(replies, lambda index, body: state["fault"]) as server:
        args = ["run", "chaos", "--data", str(data), "--out", str(out), "--model", f"openai-compatible:m@{server.url}"]
        # one session at a time: the 4th failure stops the run with 16 sessions never started
        code = main([*args, "--max-retries", "0", "--max-errors", "3", "--json", "--concurrency", "1"])
        captured = capsys.readouterr()
        payload = json.loads(captured.out)
        assert code == 4
        assert "voirdire: run stopped: 4 sessions failed, more than max_errors=3 allows" in captured.err
        assert "16 sessions not started" in captured.err and "run the same command again to resume" in captured.err
        assert payload["stopped"] and payload["not_started"] == 16 and len(payload["errors"]) == 4
        t = load(out)  # consistent: the failed sessions have their error, the others no event at all
        assert sorted(t.sessions) == sorted(payload["errors"]) and all(s.errors for s in t.sessions.values())
        assert sum(isinstance(r, SessionStart) for r in read_lines(out)) == 4
        state["fault"] = "ok"  # the endpoint recovers: the same command resumes
        assert main([*args, "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["skipped"] == 0 and not payload["errors"] and len(load(out).finished()) == 20


def test_a_share_of_sessions_as_the_budget(chaos_cli: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data, out = questions(tmp_path / "qs.jsonl", 20), tmp_path / "t.jsonl"
    with ChaosServer(replies, always("500")) as bad:  # type: ignore[arg-type]
        code = main(
            ["run", "chaos", "--data", str(data), "--out", str(out), "--model", f"openai-compatible:m@{bad.url}",
             "--max-retries", "0", "--max-errors", "10%", "--concurrency", "2", "--json"]
        )  # fmt: skip
    payload = json.loads(capsys.readouterr().out)
    assert code == 4 and 3 <= len(payload["errors"]) <= 4 and payload["not_started"] == 20 - len(payload["errors"])


def test_exit_status_when_sessions_fail(chaos_cli: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = questions(tmp_path / "qs.jsonl", 6)
    with ChaosServer(replies, at_rates({"500": 0.5}, seed=1)) as server:
        args = ["run", "chaos", "--data", str(data), "--max-retries", "0"]
        model = ["--model", f"openai-compatible:m@{server.url}"]
        assert main([*args, *model, "--out", str(tmp_path / "a.jsonl")]) == 3
        assert "sessions failed (exit status 3; --allow-errors exits 0)" in capsys.readouterr().err
        assert main([*args, *model, "--out", str(tmp_path / "b.jsonl"), "--allow-errors"]) == 0
    with ChaosServer(replies) as server:
        model = ["--model", f"openai-compatible:m@{server.url}"]
        assert main([*args, *model, "--out", str(tmp_path / "c.jsonl")]) == 0


@pytest.mark.parametrize("bad", ["-1", "x", "5.5", "101%", "%"])
def test_max_errors_must_be_a_count_or_a_share(bad: str) -> None:
    with pytest.raises(ValueError, match="expected a count N >= 0 or a share P%"):
        ErrorBudget.parse(bad)
    assert ErrorBudget.parse("0").allowed(50) == 0 and ErrorBudget.parse("10%").allowed(50) == 5
    assert ErrorBudget.parse("2.5%").allowed(200) == 5 and str(ErrorBudget.parse("10%")) == "10%"


def test_a_warning_is_shown_once_when_it_first_occurs(
    chaos_cli: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stderr = io.StringIO()
    seen_during_run: list[str] = []
    data = questions(tmp_path / "qs.jsonl", 5)

    def reply(messages: list[dict[str, object]]) -> str:
        seen_during_run.append(stderr.getvalue())  # what stderr held while sessions were still running
        return replies(messages)  # type: ignore[arg-type]

    monkeypatch.setattr(sys, "stderr", stderr)
    with ChaosServer(reply) as server:
        code = main(
            ["run", "chaos", "--data", str(data), "--warn", "--out", str(tmp_path / "t.jsonl"), "--no-progress",
             "--model", f"openai-compatible:m@{server.url}", "--json"]
        )  # fmt: skip
    assert code == 0
    assert stderr.getvalue().count("warning: chaos: the same warning in every session") == 1
    assert "warning: chaos: the same warning" in seen_during_run[-1]  # printed before the last call, not at the end
    assert json.loads(capsys.readouterr().out)["warnings"] == ["chaos: the same warning in every session"]


def test_the_lock_is_removed_while_held_and_a_stale_handle_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    lock = out.with_name("t.jsonl.lock")
    with _exclusive(out):
        early = lock.open("a")  # a second run opened the lock file before the first one finished
        with pytest.raises(BlockingIOError):
            fcntl.flock(early, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(ResumeError, match="another run is writing"), _exclusive(out):
            pass
    assert not lock.exists()
    fcntl.flock(early, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the old file is free now, but no longer the lock ...
    assert not _same_file(early, lock)
    with _exclusive(out):  # ... so a run that locked it opens the path again and holds the real lock
        assert lock.exists() and not _same_file(early, lock)
        with pytest.raises(ResumeError), _exclusive(out):
            pass
    early.close()
