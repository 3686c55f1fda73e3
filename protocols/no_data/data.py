"""Loaders for the No-Data Algorithm's synthetic data (§8.0.1; ../shared/data/no_data_algorithm/SOURCE.md).

Each file is a JSON list of ``[x, y]`` pairs: ``x`` a bit string (12 bits in the paper's data), ``y`` "0"/"1".
Errors name the file and the offending row as every voirdire input error does (``file[row]: ...``, or
``file:line: ...`` for a file that is not JSON or not UTF-8), so a bad file is fixed in one look.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from voirdire.kit.data import DatasetError, read_text

from .rubric import RUBRICS, Label, Rubric

Split = Literal["train", "test"]

DATA_ENV = "VOIRDIRE_NO_DATA_DIR"
_FOLDER = ("data", "no_data_algorithm")
#: §8.0.1: "good" = in-phenomenon (IP), "other" = out-of-phenomenon (OOP).
FILES: dict[str, dict[str, str]] = {
    "ip": {"train": "good_data_train_with_xor.json", "test": "good_data_test_with_xor.json"},
    "oop": {"train": "other_data_train_with_xor.json", "test": "other_data_test_with_xor.json"},
}


class DataError(DatasetError):
    """A data file that cannot be used, with the file and row in the message."""


class Datapoint(BaseModel):
    x: str
    y: Label


class Dataset(BaseModel):
    """A labelled data set and the rubric of its phenomenon (what the verifier checks against, §8.0.3)."""

    name: str
    path: str
    rows: list[Datapoint]
    rubric_name: str

    @property
    def xs(self) -> list[str]:
        return [row.x for row in self.rows]

    @property
    def ys(self) -> list[Label]:
        return [row.y for row in self.rows]

    @property
    def rubric(self) -> Rubric:
        return RUBRICS[self.rubric_name]


def _label(value: Any, where: str) -> Label:
    if isinstance(value, bool):
        raise DataError(f"{where}: label must be 0 or 1, got {value!r}")
    if isinstance(value, int) and value in (0, 1):
        return value
    if isinstance(value, str) and value.strip() in ("0", "1"):
        return int(value.strip())
    raise DataError(f'{where}: label must be 0 or 1 (or "0"/"1"), got {value!r}')


def parse_bitstrings(payload: Any, source: str = "<data>") -> list[Datapoint]:
    """Validate a decoded JSON payload: a non-empty list of ``[x, y]`` with equal-length bit strings."""
    if not isinstance(payload, list):
        raise DataError(f"{source}: expected a JSON list of [x, y] pairs, got {type(payload).__name__}")
    if not payload:
        raise DataError(f"{source}: the file holds no rows")
    rows: list[Datapoint] = []
    width: int | None = None
    for i, item in enumerate(payload):
        where = f"{source}[{i}]"
        if not isinstance(item, (list, tuple)) or len(item) != 2:
            raise DataError(f"{where}: expected a pair [x, y], got {item!r}")
        x, y = item
        if not isinstance(x, str) or not x or any(ch not in "01" for ch in x):
            raise DataError(f"{where}: x must be a non-empty string of 0s and 1s, got {x!r}")
        if width is None:
            width = len(x)
        elif len(x) != width:
            raise DataError(f"{where}: x has {len(x)} bits but the first row has {width}")
        rows.append(Datapoint(x=x, y=_label(y, where)))
    return rows


def load_bitstrings(path: str | os.PathLike[str]) -> list[Datapoint]:
    """Read and validate one ``[[x, y], ...]`` JSON file."""
    p = Path(path)
    text = read_text(p, "data", DataError)
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as err:
        raise DataError(f"{p}:{err.lineno}: invalid JSON: {err.msg} (column {err.colno})") from None
    return parse_bitstrings(payload, str(p))


def data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """Where the shared data lives: ``explicit``, ``$VOIRDIRE_NO_DATA_DIR``, or ``shared/`` by the repo."""
    candidates: list[Path] = []
    if explicit is not None:
        candidates.append(Path(explicit))
    if os.environ.get(DATA_ENV):
        candidates.append(Path(os.environ[DATA_ENV]))
    repo = Path(__file__).resolve().parents[2]  # protocols/no_data/data.py -> repository root
    for base in (repo, Path.cwd()):
        candidates += [base.parent / "shared" / Path(*_FOLDER), base / "shared" / Path(*_FOLDER)]
    for c in candidates:
        if (c / FILES["ip"]["test"]).is_file():
            return c
    tried = ", ".join(str(c) for c in candidates)
    raise DataError(f"no_data_algorithm data not found (set ${DATA_ENV}); looked in: {tried}")


def load_split(name: str, split: Split = "test", root: str | os.PathLike[str] | None = None) -> Dataset:
    """``load_split("ip", "train")`` etc.: the paper's files with their phenomenon's rubric."""
    if name not in FILES:
        raise DataError(f"unknown data set {name!r}; expected one of {', '.join(FILES)}")
    path = data_dir(root) / FILES[name][split]
    return Dataset(name=f"{name}-{split}", path=str(path), rows=load_bitstrings(path), rubric_name=name)


def resolve_dataset(spec: str, rubric: str | None = None, root: str | os.PathLike[str] | None = None) -> Dataset:
    """CLI ``--data ip|oop|PATH``: a name gives the test split; a path needs its verifier rubric (``ip``/``oop``),
    which is never guessed from the file name."""
    if spec in FILES:
        data = load_split(spec, "test", root)
        if rubric is not None and rubric != spec:
            return data.model_copy(update={"rubric_name": _rubric_name(rubric)})
        return data
    rubric_name = rubric_name_for(spec, rubric)
    path = Path(spec)
    return Dataset(name=path.stem, path=str(path), rows=load_bitstrings(path), rubric_name=rubric_name)


def rubric_name_for(spec: str, rubric: str | None = None) -> str:
    """The verifier's rubric for ``--data spec``: ``rubric`` if given, else the named split's own. A file has no
    rubric of its own: guessing it from the name would silently check the wrong phenomenon, so it is an error."""
    if rubric is not None:
        return _rubric_name(rubric)
    if spec in FILES:
        return spec
    raise DataError(f"{spec}: a data file needs its verifier rubric (--rubric ip|oop); it is not guessed from the name")


def _rubric_name(name: str) -> str:
    if name not in RUBRICS:
        raise DataError(f"unknown rubric {name!r}; expected one of {', '.join(RUBRICS)}")
    return name


def check_labels(rows: Sequence[Datapoint], rubric: Rubric, source: str = "<data>") -> None:
    """Raise if any stored label disagrees with ``f = σ C`` of the rubric (guards against a wrong rubric)."""
    for i, row in enumerate(rows):
        if rubric.label(row.x) != row.y:
            raise DataError(
                f"{source}[{i}]: label {row.y} but rubric {rubric.name!r} gives {rubric.label(row.x)} for {row.x}"
            )
