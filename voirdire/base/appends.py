"""Appending lines to a file that other writers share (transcripts, sidecars, replay recordings): a line is written
whole at the end, and a half-written last line a killed writer left is cut before the next one is appended."""

from __future__ import annotations

import os


def append_all(fd: int, data: bytes) -> None:
    """Write ``data`` at the end of the file: one ``os.write`` unless the kernel takes less (a signal, a full
    disk), when the rest follows; only a lone writer (or one holding the lock) may rely on the rest following."""
    written = os.write(fd, data)
    if written < len(data):  # the kernel took less: the rest from where it stopped (no view made for a whole line)
        view = memoryview(data)[written:]
        while view:
            view = view[os.write(fd, view) :]


def cut_torn_tail(fd: int) -> None:
    """Truncate a half-written last line (its writer was killed mid-write) back to the last newline."""
    end = os.fstat(fd).st_size
    if end == 0 or os.pread(fd, 1, end - 1) == b"\n":
        return
    at = end
    while at > 0:
        start = max(0, at - 65536)
        newline = os.pread(fd, at - start, start).rfind(b"\n")
        if newline >= 0:
            os.ftruncate(fd, start + newline + 1)
            return
        at = start
    os.ftruncate(fd, 0)
