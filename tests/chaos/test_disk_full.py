"""A full disk is one behaviour everywhere: exit status 5, one line naming the file, no traceback, nothing
half-written. The disk is filled by injecting ENOSPC where the bytes are written (a small tmpfs needs root)."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from tests.chaos.conftest import questions
from tests.chaos.protocol import replies
from tests.chaos.server import ChaosServer
from voirdire.cli import main
from voirdire.errors import CannotWrite
from voirdire.writes import write_atomic


def full_disk(monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    """Every fsync of a file under ``where`` fails as a full device does."""
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if os.readlink(f"/proc/self/fd/{fd}").startswith(where):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)


def test_a_failed_write_leaves_the_old_file_and_no_temporary_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "report.json"
    target.write_text('{"old": true}')
    full_disk(monkeypatch, str(tmp_path))
    with pytest.raises(CannotWrite) as caught:
        write_atomic(target, "x" * 10_000, "--report")
    assert str(caught.value).startswith(f"--report {target}: no space left on the device")
    assert caught.value.exit_status == 5 and caught.value.errno == errno.ENOSPC
    assert target.read_text() == '{"old": true}' and sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]


def test_a_full_report_disk_exits_5_naming_the_file(
    chaos_cli: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data, out, report = questions(tmp_path / "qs.jsonl", 3), tmp_path / "t.jsonl", tmp_path / "full" / "r.json"
    report.parent.mkdir()
    full_disk(monkeypatch, str(report.parent))
    with ChaosServer(replies) as server:
        code = main(
            ["run", "chaos", "--data", str(data), "--out", str(out), "--report", str(report), "--no-progress",
             "--model", f"openai-compatible:m@{server.url}"]
        )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 5, err
    assert f"voirdire: error: --report {report}: no space left on the device" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not report.exists() and not list(report.parent.iterdir())  # no 0-byte report, no temporary file
    assert len([json.loads(line) for line in out.read_text().splitlines()]) > 3  # the run itself is kept
