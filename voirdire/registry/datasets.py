"""Reading datasets: JSONL, CSV/TSV, a JSON list, a Parquet file, a Hugging Face ``datasets`` folder (written by
``save_to_disk``) or a Hub dataset (``hf://owner/name``), and in the Python API a ``pandas.DataFrame`` or a
``datasets.Dataset``; every record tagged with where it came from.

Each protocol turns a record into its ``Item`` (``Protocol.item_from_record``); any problem is raised as a
``DatasetError`` naming the file and line (or row index), so a bad row never hides in a long run. Columns named
otherwise than the item's fields are mapped with ``fields`` (``--field claim=statement``: the item field ``claim``
is read from the column ``statement``); a column that is not there is an error listing the columns that are.
pyarrow, pandas and ``datasets`` are imported only for the formats that need them (``pip install
'voirdire[data]'``).
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar, overload

from pydantic import BaseModel, ValidationError

from voirdire.base import MAX_JSON_DEPTH, IdList, VoirdireError, too_deep

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
    field may span several lines). Read strictly: a quote never closed (which would swallow the rest of the file
    into one field), a stray quote inside a field, or a column named twice in the header (the last one would win)
    is an error naming the line."""
    text = _utf8(path, path.read_bytes(), bom=True)  # -sig: spreadsheets write a BOM
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    header: list[str] | None = None
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            if "unexpected end of data" in str(exc):
                raise DatasetError(
                    f"{path}:{start}: a quoted field starts on this line and its quote is never closed "
                    f"(the rest of the file, to line {reader.line_num}, would be one field)"
                ) from None
            raise DatasetError(f"{path}:{start}: not valid CSV: {exc}") from None
        if not row:
            continue  # a blank line
        if header is None:
            twice = [name for k, name in enumerate(row) if name in row[:k]]
            if twice:
                columns = [k + 1 for k, name in enumerate(row) if name == twice[0]]
                raise DatasetError(
                    f"{path}:{start}: the header names column {twice[0]!r} twice (columns "
                    f"{' and '.join(map(str, columns))}): rename one"
                )
            header = row
            continue
        if len(row) > len(header):
            raise DatasetError(f"{path}:{start}: more fields than the header has ({len(row)} > {len(header)})")
        yield f"{path}:{start}", {name: row[k] if k < len(row) else None for k, name in enumerate(header)}


Source = str | Path | Any
"""A dataset: a file or folder path, ``hf://owner/name[:split]``, or (in the API) a ``pandas.DataFrame`` or a
``datasets.Dataset``."""

HF_SCHEME = "hf://"


def read_records(path: Source, fields: Mapping[str, str] | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(location, record)``; location is ``file:line`` (JSONL, CSV: the line a record starts on) or
    ``file[index]`` (JSON list, Parquet, a ``datasets`` folder or object, a DataFrame). ``fields`` maps item
    fields to the columns they are read from."""
    records = _records(path)
    yield from records if not fields else _renamed(records, fields, source_name(path))


def source_name(source: Source) -> str:
    """How errors and run headers name a dataset: its path (``hf://owner/name`` as written, though a ``Path`` of
    it has lost a slash), or the kind of object given in code."""
    if isinstance(source, str | Path):
        text = str(source)
        return HF_SCHEME + text[4:].lstrip("/") if text.startswith("hf:/") else text
    return f"<{type(source).__name__}>"


def _renamed(
    records: Iterable[tuple[str, dict[str, Any]]], fields: Mapping[str, str], name: str
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Records with each mapped column moved to its item field; the first record checks that every column is
    there (a dataset's records share their columns)."""
    for k, (where, rec) in enumerate(records):
        if k == 0:
            missing = [f"{field}={column}" for field, column in fields.items() if column not in rec]
            if missing:
                raise DatasetError(
                    f"{name}: no column {', '.join(repr(m.split('=', 1)[1]) for m in missing)} (--field "
                    f"{' --field '.join(missing)}); its columns are: {', '.join(map(str, rec)) or 'none'}"
                )
        moved = {column: field for field, column in fields.items()}
        yield where, {moved.get(key, key): value for key, value in rec.items()}


def parse_fields(given: Iterable[str]) -> dict[str, str]:
    """``--field FIELD=COLUMN`` options as item field -> column."""
    out: dict[str, str] = {}
    for text in given:
        field, eq, column = text.partition("=")
        if not eq or not field.strip() or not column.strip():
            raise DatasetError(f"--field {text!r}: expected FIELD=COLUMN, e.g. --field claim=statement")
        out[field.strip()] = column.strip()
    return out


def _records(source: Source) -> Iterator[tuple[str, dict[str, Any]]]:
    if not isinstance(source, str | Path):
        yield from _object_records(source)
        return
    if source_name(source).startswith(HF_SCHEME):
        yield from _hub_records(source_name(source))
        return
    path = Path(source)
    if not path.exists():
        raise DatasetError(f"{path}: no such dataset file")
    if path.is_dir():
        yield from _saved_records(path)
        return
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        yield from _parquet_records(path)
        return
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
        raise DatasetError(
            f"{path}: unknown dataset format {suffix!r} (use .jsonl, .csv, .tsv, .json, .parquet or a folder "
            "written by datasets' save_to_disk)"
        )


def native(value: Any) -> Any:
    """A cell as plain Python: numpy scalars and arrays as numbers and lists, a missing value (NaN, None) as
    None, so that an item's validation sees what a JSON record would hold."""
    if hasattr(value, "tolist") and not isinstance(value, str | bytes):
        value = value.tolist()  # numpy scalar or array, pyarrow/pandas array
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, list):
        return [native(v) for v in value]
    if isinstance(value, dict):
        return {k: native(v) for k, v in value.items()}
    return value


def _rows(name: str, rows: Iterable[Mapping[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    for i, row in enumerate(rows):
        yield f"{name}[{i}]", {str(k): native(v) for k, v in row.items()}


def _need(module: str, what: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise DatasetError(f"{what} needs {module}: pip install 'voirdire[data]'") from None


def _parquet_records(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    parquet = _need("pyarrow.parquet", f"{path}: a Parquet file")
    try:
        file = parquet.ParquetFile(path)
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise DatasetError(f"{path}: not a readable Parquet file ({str(exc).splitlines()[0]})") from None
    # Batch by batch (row groups): a large file is not held whole while its items are taken one at a time.
    yield from _rows(str(path), itertools.chain.from_iterable(b.to_pylist() for b in file.iter_batches()))


def _saved_records(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """A folder ``datasets``' ``save_to_disk`` wrote: one split (``state.json``); a DatasetDict's folder names its
    splits, one of which is the dataset to give."""
    if (path / "dataset_dict.json").exists():
        splits = sorted(p.name for p in path.iterdir() if (p / "state.json").exists())
        raise DatasetError(f"{path}: a dataset with splits {', '.join(splits)}: give one, e.g. {path / splits[0]}"
                           if splits else f"{path}: a dataset dictionary with no split saved in it")  # fmt: skip
    if not (path / "state.json").exists():
        raise DatasetError(f"{path}: is a folder, not a dataset file (nor one written by datasets' save_to_disk)")
    hf = _need("datasets", f"{path}: a datasets folder")
    try:
        loaded = hf.load_from_disk(str(path))
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{path}: cannot be read by datasets.load_from_disk ({exc})") from None
    yield from _rows(str(path), loaded)


def _offline() -> str | None:
    """The variable that keeps the Hugging Face libraries offline, when one does."""
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        if os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on"):
            return name
    return None


def _hub_records(name: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """``hf://owner/name[:split]`` through ``datasets.load_dataset`` (split ``train`` unless named), which needs
    the network unless the dataset is in the local Hugging Face cache."""
    repo, _, split = name.removeprefix(HF_SCHEME).partition(":")
    if not repo:
        raise DatasetError(f"{name}: name a dataset, e.g. hf://owner/name or hf://owner/name:test")
    hf = _need("datasets", f"{name}: a Hugging Face dataset")
    try:
        loaded = hf.load_dataset(repo, split=split or "train")
    except (ConnectionError, OSError) as exc:
        offline = _offline()
        why = f"{offline} is set" if offline else f"the Hub cannot be reached: {str(exc).splitlines()[0]}"
        raise DatasetError(
            f"{name}: loading a dataset from the Hugging Face Hub needs the network ({why}); on a machine with "
            "one, save it with datasets' save_to_disk and give that folder instead"
        ) from None
    yield from _rows(name, loaded)


def _object_records(source: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """A ``pandas.DataFrame`` (its rows) or a ``datasets.Dataset`` (any sequence of mappings) given in code."""
    name = source_name(source)
    if hasattr(source, "to_dict") and hasattr(source, "columns"):  # a DataFrame
        yield from _rows(name, source.to_dict("records"))
        return
    if isinstance(source, Iterable) and not isinstance(source, str | bytes | Mapping):
        for i, row in enumerate(source):
            if not isinstance(row, Mapping):
                raise DatasetError(f"{name}[{i}]: expected a record (a mapping of fields), got {type(row).__name__}")
            yield f"{name}[{i}]", {str(k): native(v) for k, v in row.items()}
        return
    raise DatasetError(f"{name}: not a dataset (give a path, a pandas.DataFrame or a datasets.Dataset)")


def check_selection(limit: int | None, offset: int) -> None:
    """``limit`` (at least 1, or None for all) and ``offset`` (at least 0) as ``--limit`` / ``--offset`` take
    them: a negative offset is not Python's count from the end."""
    if limit is not None and limit < 1:
        raise SelectionError(f"--limit: must be at least 1, got {limit}")
    if offset < 0:
        raise SelectionError(f"--offset: must be 0 or more, got {offset}")


def _selected(
    path: Source,
    convert: Callable[[dict[str, Any]], T],
    limit: int | None,
    offset: int,
    fields: Mapping[str, str] | None,
    check: bool = True,
    ids: IdList | None = None,
) -> Iterator[T]:
    """The selected records converted, one at a time; with ``check`` ids must be unique (a table of ids and the
    record each was first in, not of items: where that was is found again for the error), and an empty dataset or
    an ``offset`` past its end is an error at the end. ``ids``, when given, gets each item's run id as the runner
    names it by default (its ``id``, else ``item-N``)."""
    seen: dict[str, int] = {}
    records = taken = 0
    for k, (where, rec) in enumerate(read_records(path, fields)):
        records = k + 1
        if k < offset:
            continue
        if limit is not None and taken >= limit:
            break
        ident = rec.get("id")
        if ident is not None and (isinstance(ident, bool) or not isinstance(ident, str | int)):
            # An object or a list would become its Python text as the item's id ("{'a': 1}"), a float its rounding.
            raise DatasetError(f"{where}: id must be a string or a whole number, got {_kind(ident)}")
        try:
            item = convert(rec)
        except (ValidationError, ValueError, TypeError) as exc:
            raise DatasetError(f"{where}: {describe(exc)}") from exc
        if getattr(item, "id", "missing") is None:
            item = item.model_copy(update={"id": where.rsplit("/", 1)[-1]})
        if check:
            item_id = str(getattr(item, "id", where))
            if item_id in seen:
                first = _where(path, fields, seen[item_id])
                raise DatasetError(f"{where}: duplicate id {item_id!r} (first at {first})")
            seen[item_id] = k
        if ids is not None:
            ids.append(str(getattr(item, "id", None) or "") or f"item-{taken + 1}")
        taken += 1
        yield item
    if check and records == 0:
        raise DatasetError(f"{source_name(path)}: the dataset is empty (no records)")
    if check and not taken:
        raise SelectionError(f"--offset: {offset} skips every record of {source_name(path)} (it has {records})")


def _kind(value: Any) -> str:
    """How an error names a value's JSON type."""
    names = {bool: "a boolean", float: "a number with a fraction", dict: "an object", list: "a list"}
    return names.get(type(value), f"a {type(value).__name__}")


def _where(path: Source, fields: Mapping[str, str] | None, k: int) -> str:
    """Where record ``k`` of a dataset is (``file:line``), read again: a duplicate id's first place."""
    return next(itertools.islice(read_records(path, fields), k, None))[0]


def load_items(
    path: Source,
    convert: Callable[[dict[str, Any]], T],
    *,
    limit: int | None = None,
    offset: int = 0,
    fields: Mapping[str, str] | None = None,
) -> list[T]:
    """Convert records with ``convert``; ids default to the record's location and must be unique. An empty
    dataset, or an ``offset`` past its last record, is an error rather than a run of nothing. ``fields``: item
    field -> the column it is read from."""
    check_selection(limit, offset)
    return list(_selected(path, convert, limit, offset, fields))


class ItemStream(Sequence[T]):
    """The items of a dataset file, read again each time they are iterated rather than held: a run takes them one
    at a time as its slots free, so its memory does not grow with the dataset.

    Made by ``stream_items`` after one checking pass (every record converted, ids unique, errors naming
    file:line, as ``load_items``) that keeps only the count and the items' ids (``ids``: the run's session ids,
    so the runner does not read the file again for them). Indexing reads up to the item (a run never indexes;
    a caller that does often wants ``load_items``). A file changed between passes is an error, not other items."""

    def __init__(
        self, path: Path, convert: Callable[[dict[str, Any]], T], limit: int | None, offset: int,
        fields: Mapping[str, str] | None,
    ) -> None:  # fmt: skip
        self._args = (path, convert, limit, offset, fields)
        self.ids = IdList()
        """Each item's id as the runner names it by default (``Protocol.item_id``: its ``id``, else ``item-N``)."""
        self._count = sum(1 for _ in _selected(*self._args, ids=self.ids))

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[T]:
        n = 0
        for item in _selected(*self._args, check=False):
            n += 1
            yield item
        if n != self._count:
            name = source_name(self._args[0])
            raise DatasetError(f"{name}: changed while it was read ({n} items, not {self._count})")

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> list[T]: ...
    def __getitem__(self, i: int | slice) -> T | list[T]:
        if isinstance(i, slice):
            return list(self)[i]
        j = i + self._count if i < 0 else i
        if not 0 <= j < self._count:
            raise IndexError(i)
        return next(itertools.islice(self, j, None))


def stream_items(
    path: Source,
    convert: Callable[[dict[str, Any]], T],
    *,
    limit: int | None = None,
    offset: int = 0,
    fields: Mapping[str, str] | None = None,
) -> Sequence[T]:
    """``load_items``'s items, checked the same way, as an ``ItemStream`` where the source is a file or folder on
    disk (JSONL, CSV/TSV, Parquet, a ``save_to_disk`` folder: read record by record again for the run); a list for
    what is in memory already or comes from the Hub (a DataFrame, a ``datasets.Dataset``, ``hf://``). A JSON list
    file is parsed whole by each pass (a JSON array cannot be read item by item with the standard library)."""
    check_selection(limit, offset)
    if isinstance(path, (str, Path)) and not str(path).startswith("hf://") and Path(path).exists():
        return ItemStream(Path(path), convert, limit, offset, fields)
    return load_items(path, convert, limit=limit, offset=offset, fields=fields)


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
