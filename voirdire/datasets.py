"""Reading datasets: JSONL, CSV/TSV or a JSON list, every record tagged with where it came from.

Each protocol turns a record into its ``Item`` (``Protocol.item_from_record``); any problem is raised as a
``DatasetError`` naming the file and line (or list index), so a bad row never hides in a long run.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from voirdire.errors import VoirdireError

T = TypeVar("T", bound=BaseModel)


class DatasetError(VoirdireError, ValueError):
    """A dataset file or row that cannot be used; the message starts with ``file:line``."""


def read_records(path: str | Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(location, record)``; location is ``file:line`` (JSONL, CSV) or ``file[index]`` (JSON list)."""
    path = Path(path)
    if not path.exists():
        raise DatasetError(f"{path}: no such dataset file")
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        with path.open("rb") as fh:
            for n, raw in enumerate(fh, 1):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise DatasetError(f"{path}:{n}: not UTF-8 text ({exc.reason})") from exc
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise DatasetError(f"{path}:{n}: not valid JSON: {exc.msg}") from exc
                if not isinstance(rec, dict):
                    raise DatasetError(f"{path}:{n}: expected a JSON object, got {type(rec).__name__}")
                yield f"{path}:{n}", rec
    elif suffix in (".csv", ".tsv"):
        with path.open(encoding="utf-8-sig", newline="") as fh:  # -sig: spreadsheets write a BOM
            reader = csv.DictReader(fh, delimiter="\t" if suffix == ".tsv" else ",")
            try:
                for rec in reader:
                    if None in rec:
                        raise DatasetError(f"{path}:{reader.line_num}: more fields than the header has")
                    yield f"{path}:{reader.line_num}", dict(rec)
            except UnicodeDecodeError as exc:
                raise DatasetError(f"{path}:{reader.line_num + 1}: not UTF-8 text ({exc.reason})") from exc
    elif suffix == ".json":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except UnicodeDecodeError as exc:
            raise DatasetError(f"{path}: not UTF-8 text ({exc.reason})") from exc
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


def load_items(
    path: str | Path,
    convert: Callable[[dict[str, Any]], T],
    *,
    limit: int | None = None,
    offset: int = 0,
) -> list[T]:
    """Convert records with ``convert``; ids default to the record's location and must be unique."""
    items: list[T] = []
    seen: dict[str, str] = {}
    for k, (where, rec) in enumerate(read_records(path)):
        if k < offset:
            continue
        if limit is not None and len(items) >= limit:
            break
        try:
            item = convert(rec)
        except (ValidationError, ValueError, TypeError) as exc:
            raise DatasetError(f"{where}: {_short(exc)}") from exc
        if getattr(item, "id", "missing") is None:
            item = item.model_copy(update={"id": where.rsplit("/", 1)[-1]})
        item_id = str(getattr(item, "id", where))
        if item_id in seen:
            raise DatasetError(f"{where}: duplicate id {item_id!r} (first at {seen[item_id]})")
        seen[item_id] = where
        items.append(item)
    return items


def _short(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'record'}: {e['msg']}" for e in exc.errors(include_url=False)
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
