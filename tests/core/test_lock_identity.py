"""One writer per transcript however it is reached: the lock is keyed on the file itself (its device and inode),
so a hard link to a transcript in use, or the same file bind-mounted elsewhere, is refused like its own path."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.chaos.conftest import chaos_cli, questions  # noqa: F401  (chaos_cli is a fixture)
from tests.chaos.protocol import replies
from tests.chaos.server import ChaosServer
from voirdire.cli import main
from voirdire.runner.lock import exclusive
from voirdire.runner.resume import ResumeError
from voirdire.transcript import Verdict, read_lines


def test_a_hard_link_to_a_transcript_in_use_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    out.write_text("")
    (tmp_path / "other").mkdir()
    link = tmp_path / "other" / "hard.jsonl"
    os.link(out, link)
    busy = "another run is writing this transcript"
    with exclusive(out), pytest.raises(ResumeError, match=busy), exclusive(link):
        pass
    with exclusive(link), pytest.raises(ResumeError, match=busy), exclusive(out):  # and the other way round
        pass
    with exclusive(out):  # released at the end: the next run gets it
        pass
    assert not list(tmp_path.rglob("*.lock"))


def test_a_transcript_not_written_yet_is_not_left_behind_empty(tmp_path: Path) -> None:
    out = tmp_path / "new.jsonl"
    with exclusive(out):
        pass
    assert not out.exists()


def test_a_run_through_a_hard_link_while_another_runs_is_refused(
    chaos_cli: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]  # noqa: F811
) -> None:
    data, out = questions(tmp_path / "qs.jsonl", 4), tmp_path / "t.jsonl"
    args = ["run", "chaos", "--data", str(data), "--no-progress"]
    with ChaosServer(replies) as server:
        assert main([*args, "--out", str(out), "--limit", "2", "--model", f"openai-compatible:m@{server.url}"]) == 0
        link = tmp_path / "hard.jsonl"
        os.link(out, link)
        with exclusive(out):  # a first run holds the transcript
            code = main([*args, "--out", str(link), "--model", f"openai-compatible:m@{server.url}"])
        assert code == 2 and "another run is writing this transcript" in capsys.readouterr().err
        assert main([*args, "--out", str(link), "--model", f"openai-compatible:m@{server.url}"]) == 0
    verdicts = [r.session_id for r in read_lines(out) if isinstance(r, Verdict)]
    assert sorted(verdicts) == sorted(set(verdicts)) and len(verdicts) == 4  # each session once


CHILD = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from voirdire.runner.lock import exclusive
    from voirdire.runner.resume import ResumeError
    try:
        with exclusive(Path(sys.argv[1])):
            pass
    except ResumeError as exc:
        print(exc)
        sys.exit(3)
    """
)


def test_a_bind_mounted_transcript_in_use_is_refused(tmp_path: Path) -> None:
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        pytest.skip("unshare or mount not installed")
    out = tmp_path / "t.jsonl"
    out.write_text("")
    (tmp_path / "mnt").mkdir()
    target = tmp_path / "mnt" / "elsewhere.jsonl"
    target.write_text("")
    # In a mount namespace of its own (nothing outside it sees the mount): the transcript bind-mounted on another
    # path, then locked through that path while this process holds it through its own.
    script = f'mount --bind "$1" "$2" || exit 77; exec "{sys.executable}" -c "$3" "$2"'
    argv = ["unshare", "--mount", "sh", "-c", script, "sh", str(out), str(target), CHILD]
    probe = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    if probe.returncode == 77:
        pytest.skip(f"mounting is not permitted here: {probe.stderr.strip()}")
    assert probe.returncode == 0, probe.stderr  # nobody holds it: the child locks it
    with exclusive(out):
        held = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert held.returncode == 3, (held.stdout, held.stderr)
    assert "another run is writing this transcript" in held.stdout


def test_a_forked_worker_does_not_keep_the_transcript_locked(tmp_path: Path) -> None:
    # --workers forks the run's process while it holds the lock; a worker that outlives its run (the run was
    # killed) must not keep the next run out.
    out = tmp_path / "t.jsonl"
    out.write_text("")
    r, w = os.pipe()
    ready_r, ready_w = os.pipe()
    with exclusive(out):
        pid = os.fork()
        if pid == 0:  # the worker: says it is past the fork (its at-fork handlers ran), then waits for the test
            os.write(ready_w, b"r")
            os.read(r, 1)
            os._exit(0)
    os.read(ready_r, 1)  # a worker that has started, as a real one has long before a next run: not a race with it
    try:
        with exclusive(out):  # the worker still lives
            pass
    finally:
        os.write(w, b"x")
        os.waitpid(pid, 0)
