"""A transcript's lines read by their byte spans, as the transcript index (``voirdire.web.index``) records them:
one line, the lines of a session, whether spans cover whole lines, the digest that proves a file was only appended
to, and a run header read from its line."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import ValidationError

from voirdire.transcript import RunHeader, bounded_lines, max_line_bytes
from voirdire.web.attempt import HeaderRef
from voirdire.web.errors import ViewerError
from voirdire.web.records import loads

TAIL = 4096  # bytes before the indexed end whose digest proves the file was only appended to


def tail_digest(fh: BinaryIO, end: int) -> str:
    """The digest of the ``TAIL`` bytes before ``end``."""
    start = max(0, end - TAIL)
    fh.seek(start)
    return hashlib.sha256(fh.read(end - start)).hexdigest()


def read_line(path: Path, span: list[int]) -> bytes | None:
    """The line at ``span`` ([offset, length]), at most the reading cap of it."""
    with path.open("rb") as fh:
        fh.seek(span[0])
        return fh.read(min(span[1], max_line_bytes())) or None


def read_spans(path: Path, spans: list[list[int]]) -> bytes:
    """The lines of ``spans``, each at most the reading cap long (a longer one, which only a forged index points
    at, is left out unread)."""
    cap = max_line_bytes()
    parts = []
    with path.open("rb") as fh:
        for offset, length in spans:
            fh.seek(offset)
            left = length
            for raw in bounded_lines(fh, cap):
                size = raw if isinstance(raw, int) else len(raw)
                if isinstance(raw, bytes) and size <= left:
                    parts.append(raw)
                left -= size
                if left <= 0:
                    break
    return b"".join(parts)


def whole_lines(path: Path, spans: list[list[int]], size: int) -> bool:
    """Whether each span lies inside the first ``size`` bytes (those indexed) and covers whole lines (starts after
    a newline or at 0, ends with one)."""
    try:
        with path.open("rb") as fh:
            for offset, length in spans:
                if offset < 0 or length < 1 or offset + length > size:
                    return False
                fh.seek(max(0, offset - 1))
                before = fh.read(1) if offset else b"\n"
                fh.seek(offset + length - 1)
                if before != b"\n" or fh.read(1) != b"\n":
                    return False
    except OSError:
        return False
    return True


def header_line(path: Path, ref: HeaderRef, size: int) -> bytes | None:
    """The header line ``ref`` points at, or None when it is no whole header line of that run (a forged or stale
    index)."""
    if not whole_lines(path, [[ref.offset, ref.length]], size):
        return None
    raw = read_line(path, [ref.offset, ref.length]) or b""
    try:
        rec = loads(raw)
    except RecursionError:
        return None
    if not isinstance(rec, dict) or rec.get("kind") != "header" or str(rec.get("run_id")) != ref.run_id:
        return None
    return raw


def readable_header(path: Path, raw: bytes, problems: list[str]) -> RunHeader:
    """A run header; one with fields this voirdire does not know (written by a newer one) is read without them,
    and the fields are named among the run's ``problems``."""
    try:
        return RunHeader.model_validate_json(raw)
    except ValidationError as exc:
        errors = exc.errors()
    data = loads(raw)
    unknown = [e["loc"] for e in errors if e["type"] == "extra_forbidden"]
    if not isinstance(data, dict) or len(unknown) != len(errors):
        raise ViewerError(f"{path}: unreadable run header: {errors[0]['msg']}")
    for loc in unknown:
        _drop(data, loc)
    try:
        header = RunHeader.model_validate(data)
    except ValidationError as exc:
        raise ViewerError(f"{path}: unreadable run header: {exc.errors()[0]['msg']}") from None
    names = ", ".join(".".join(str(part) for part in loc) for loc in unknown)
    note = (
        f"{path}: the run header of {header.run_id} has fields this voirdire does not know ({names}; "
        "written by a newer version?): shown without them"
    )
    if note not in problems:
        problems.append(note)
    return header


def _drop(data: Any, loc: tuple[Any, ...]) -> None:
    """Remove the value at ``loc`` (a validation error's location) from nested dicts and lists."""
    for part in loc[:-1]:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return
    if isinstance(data, dict):
        data.pop(loc[-1], None)
