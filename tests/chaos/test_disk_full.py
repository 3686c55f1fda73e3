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
from voirdire.base.errors import CannotWrite
from voirdire.base.writes import write_atomic
from voirdire.cli import main


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


def _transcript_fills_after(monkeypatch: pytest.MonkeyPatch, lines: int) -> None:
    """The transcript's device is full once ``lines`` more lines were written (in this process)."""
    from voirdire.transcript import io as transcript_io

    real = transcript_io._write_all
    left = {"n": lines}

    def write_all(fd: int, data: bytes) -> None:
        left["n"] -= 1
        if left["n"] < 0:
            os.write(fd, data[: len(data) // 2])  # the kernel took half a line, then the device was full
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(fd, data)

    monkeypatch.setattr(transcript_io, "_write_all", write_all)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_full_transcript_disk_exits_5_naming_the_file_and_the_run_resumes(
    workers: str,
    chaos_cli: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data, out = questions(tmp_path / "qs.jsonl", 12), tmp_path / "t.jsonl"
    with ChaosServer(replies) as server:
        args = ["run", "chaos", "--data", str(data), "--out", str(out), "--no-progress", "--workers", workers,
                "--concurrency", "1",  # sessions in order: the disk fills in a known one
                "--model", f"openai-compatible:m@{server.url}"]  # fmt: skip
        with monkeypatch.context() as patch:
            _transcript_fills_after(patch, 20)
            code = main(args)
        err = capsys.readouterr().err
        assert code == 5, err
        assert f"voirdire: error: transcript {out}: no space left on the device" in err
        assert "Traceback" not in err and "internal error" not in err
        assert main([*args, "--json"]) == 0  # space again: the same command resumes, the half line cut away
    payload = json.loads(capsys.readouterr().out)
    assert not payload["errors"] and payload["skipped"] >= 1
    from voirdire.transcript import load

    assert len(load(out).finished()) == 12


def test_a_full_cache_disk_is_the_same_error(tmp_path: Path) -> None:
    from voirdire.transcript.cache import ResponseCache

    cache = ResponseCache(tmp_path / "c.jsonl")

    class FullDevice(type(tmp_path)):  # type: ignore[misc]
        def open(self, *args: object, **kwargs: object) -> object:  # type: ignore[override]
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    cache.path = FullDevice(tmp_path / "c.jsonl")
    from voirdire.transcript.cache import CachedReply

    with pytest.raises(CannotWrite, match=f"--cache {tmp_path / 'c.jsonl'}: no space left on the device"):
        cache.put(
            "sha256:x", CachedReply.model_validate({"text": "Paris.", "prompt_tokens": 1, "completion_tokens": 1})
        )
