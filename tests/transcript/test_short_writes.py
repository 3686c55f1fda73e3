"""A transcript line the kernel takes in several writes (a signal, a nearly full disk) is still written whole: the
writer goes on from where each write stopped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from voirdire.transcript import io as transcript_io


@pytest.mark.parametrize("shared", [False, True])
def test_a_line_taken_a_few_bytes_at_a_time_is_written_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shared: bool
) -> None:
    real = os.write
    sizes: list[int] = []

    def short(fd: int, data: bytes | memoryview) -> int:
        sizes.append(len(data))
        return real(fd, bytes(data[:7]))

    path = tmp_path / "run.jsonl"
    writer = transcript_io.TranscriptWriter(path, shared=shared)
    monkeypatch.setattr(transcript_io.os, "write", short)
    lines = ['{"kind": "a", "text": "' + "é" * 20 + '"}', '{"kind": "b"}']
    for line in lines:
        writer.write_line(line)
    monkeypatch.undo()
    writer.close()
    assert path.read_text(encoding="utf-8") == "".join(line + "\n" for line in lines)
    assert len(sizes) > 2 * len(lines) and sizes[0] == len((lines[0] + "\n").encode())
