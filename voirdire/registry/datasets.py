"""Reading datasets: JSONL, CSV/TSV or a JSON list, every record tagged with where it came from.

Each protocol turns a record into its ``Item`` (``Protocol.item_from_record``); any problem is raised as a
``DatasetError`` naming the file and line (or list index), so a bad row never hides in a long run.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from voirdire.base import MAX_JSON_DEPTH, VoirdireError, too_deep

T = TypeVar("T", bound=BaseModel)


class DatasetError(VoirdireError, ValueError):
    """A dataset file or row that cannot be used; the message starts with ``file:line``."""


class SelectionError(VoirdireError, ValueError):
    """Which items of a dataset to run (offset, limit) cannot select any."""


def _utf8(path: Path, data: bytes, *, bom: bool = False, first_line: int = 1) -> str:
    """``data`` (from ``first_line`` of ``path`` on) decoded as UTF-8; an error names the line of the first bad
    byte, counted in the raw bytes."""
    try:
        return data.decode("utf-8-sig" if bom else "utf-8")
    except UnicodeDecodeError as exc:
        line = first_line + data.count(b"\n", 0, exc.start)
        raise DatasetError(f"{path}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x}); save it as UTF-8") from None


def _csv_records(path: Path, delimiter: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Rows of a CSV/TSV file as records keyed by its header, each located at the line it starts on (a quoted
    field may span several lines)."""
    text = _utf8(path, path.read_bytes(), bom=True)  # -sig: spreadsheets write a BOM
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header: list[str] | None = None
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise DatasetError(f"{path}:{start}: not valid CSV: {exc}") from None
        if not row:
            continue  # a blank line
        if header is None:
            header = row
            continue
        if len(row) > len(header):
            raise DatasetError(f"{path}:{start}: more fields than the header has ({len(row)} > {len(header)})")
        yield f"{path}:{start}", {name: row[k] if k < len(row) else None for k, name in enumerate(header)}


def read_records(path: str | Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(location, record)``; location is ``file:line`` (JSONL, CSV: the line a record starts on) or
    ``file[index]`` (JSON list)."""
    path = Path(path)
    if not path.exists():
        raise DatasetError(f"{path}: no such dataset file")
    if path.is_dir():
        raise DatasetError(f"{path}: is a folder, not a dataset file")
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        with path.open("rb") as fh:
            for n, raw in enumerate(fh, 1):
                line = _utf8(path, raw, bom=n == 1, first_line=n)  # a BOM, as in CSV: editors on Windows write one
                if not line.strip():
                    continue
                if too_deep(raw):  # also what a transcript line may hold: the item is written into one
                    raise DatasetError(f"{path}:{n}: JSON nested more than {MAX_JSON_DEPTH} levels deep")
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise DatasetError(f"{path}:{n}: not valid JSON: {exc.msg}") from exc
                if not isinstance(rec, dict):
                    raise DatasetError(f"{path}:{n}: expected a JSON object, got {type(rec).__name__}")
                yield f"{path}:{n}", rec
    elif suffix in (".csv", ".tsv"):
        yield from _csv_records(path, "\t" if suffix == ".tsv" else ",")
    elif suffix == ".json":
        try:
            raw_json = path.read_bytes()
            if too_deep(raw_json, MAX_JSON_DEPTH + 1):  # the list around the records is one more level
                raise DatasetError(f"{path}: JSON nested more than {MAX_JSON_DEPTH} levels deep")
            data = json.loads(_utf8(path, raw_json, bom=True))
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from exc
        if not isinstance(data, list):
            raise DatasetError(f"{path}: expected a JSON list of objects")
        for i, rec in enumerate(data):
            if not isinstance(rec, dict):
                raise DatasetError(f"{path}[{i}]: expected a JSON object, got {type(rec).__name__}")
            yield f"{path}[{i}]", rec
    else:
        raise DatasetError(f"{path}: unknown dataset format {suffix!r} (use .jsonl, .csv, .tsv or .json)")


def check_selection(limit: int | None, offset: int) -> None:
    """``limit`` (at least 1, or None for all) and ``offset`` (at least 0) as ``--limit`` / ``--offset`` take
    them: a negative offset is not Python's count from the end."""
    if limit is not None and limit < 1:
        raise SelectionError(f"--limit: must be at least 1, got {limit}")
    if offset < 0:
        raise SelectionError(f"--offset: must be 0 or more, got {offset}")


def load_items(
    path: str | Path,
    convert: Callable[[dict[str, Any]], T],
    *,
    limit: int | None = None,
    offset: int = 0,
) -> list[T]:
    """Convert records with ``convert``; ids default to the record's location and must be unique. An empty
    dataset, or an ``offset`` past its last record, is an error rather than a run of nothing."""
    check_selection(limit, offset)
    items: list[T] = []
    seen: dict[str, str] = {}
    records = 0
    for k, (where, rec) in enumerate(read_records(path)):
        records = k + 1
        if k < offset:
            continue
        if limit is not None and len(items) >= limit:
            break
        try:
            item = convert(rec)
        except (ValidationError, ValueError, TypeError) as exc:
            raise DatasetError(f"{where}: {describe(exc)}") from exc
        if getattr(item, "id", "missing") is None:
            item = item.model_copy(update={"id": where.rsplit("/", 1)[-1]})
        item_id = str(getattr(item, "id", where))
        if item_id in seen:
            raise DatasetError(f"{where}: duplicate id {item_id!r} (first at {seen[item_id]})")
        seen[item_id] = where
        items.append(item)
    if records == 0:
        raise DatasetError(f"{path}: the dataset is empty (no records)")
    if not items:
        raise SelectionError(f"--offset: {offset} skips every record of {path} (it has {records})")
    return items


def describe(exc: Exception) -> str:
    """A record's problem in one line: each pydantic error as ``field: message`` (no dump, no URL)."""
    if isinstance(exc, ValidationError):
        return "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'record'}: {e['msg'].removeprefix('Value error, ')}"
            for e in exc.errors(include_url=False)
        )
    return str(exc)


def as_list(value: Any) -> list[str]:
    """Gold answers given as a list, a JSON list in a string, or a ``|``-separated string."""
    if value is None or value == "":
        return []
    if isinstance(value, list):
        return [str(v) for v in value]
    text = str(value).strip()
    if text.startswith("["):
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"answers look like a JSON list but do not parse: {exc.msg}") from exc
        return [str(v) for v in parsed]
    return [a.strip() for a in text.split("|") if a.strip()]
