"""Human labels of a run's items: a JSONL or CSV file of ``item_id``, ``label`` and an optional ``annotator``.

Read like every input: every problem is one line naming the file and line (``labels.csv:7: …``) and nothing is
computed from a file with a problem. A label is one of the run's verdict words (each decision the protocol gave
in this run, read as the accept/reject it stood for), ``accepted``/``rejected``, or a boolean (``true``/``false``,
``1``/``0``); case does not matter. A JSONL line of ``voirdire calibrate --sample ... -o`` keeps its other keys
(``session_id``, ``item``, ``reference``, ``command``) and may leave ``label`` null: that item has not been labelled.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from voirdire.base import VoirdireError, read_text

NO_ANNOTATOR = "(unnamed)"  # the annotator of a line that names none
KNOWN_KEYS = frozenset({"item_id", "label", "annotator", "session_id", "item", "reference", "command"})
BOOLEAN_WORDS = {"accepted": True, "rejected": False, "true": True, "false": False, "1": True, "0": False}


class LabelsError(VoirdireError, ValueError):
    """A labels file that cannot be used; the message names the file and line."""


@dataclass(frozen=True)
class Label:
    item_id: str
    accepted: bool
    annotator: str
    line: int


def label_words(decisions: Mapping[str, bool]) -> dict[str, bool]:
    """The words a label may be: the run's decisions (each as the accept/reject it stood for) and the booleans."""
    return {**{d.lower(): a for d, a in decisions.items()}, **BOOLEAN_WORDS}


def read_labels(path: Path, *, item_ids: set[str], words: Mapping[str, bool]) -> list[Label]:
    """The labels of ``path``, checked: known item ids, labels among ``words``, no item labelled twice by one
    annotator; a line whose label is null (an item of a sample not labelled yet) is skipped."""
    text = read_text(path, "labels", LabelsError).removeprefix("\ufeff")  # a spreadsheet's byte-order mark
    rows = _csv_rows(path, text) if path.suffix.lower() == ".csv" else _jsonl_rows(path, text)
    labels: list[Label] = []
    first: dict[tuple[str, str], int] = {}
    allowed = ", ".join(sorted(words))
    for line, row in rows:
        where = f"{path}:{line}"
        item = row.get("item_id")
        if not isinstance(item, str | int) or isinstance(item, bool) or str(item) == "":
            raise LabelsError(f"{where}: no item_id (every line needs item_id and label)")
        item = str(item)
        if item not in item_ids:
            raise LabelsError(f"{where}: unknown item id {item!r} (no session of the transcript has it)")
        raw = row.get("label")
        if raw is None or raw == "":
            continue
        word = _word(raw)
        if word not in words:
            raise LabelsError(f"{where}: label {raw!r} is not one of this run's verdicts ({allowed})")
        annotator = row.get("annotator")
        annotator = NO_ANNOTATOR if annotator in (None, "") else str(annotator)
        key = (item, annotator)
        if key in first:
            who = "" if annotator == NO_ANNOTATOR else f" by annotator {annotator!r}"
            raise LabelsError(f"{where}: item {item!r} labelled again{who} (first on line {first[key]})")
        first[key] = line
        labels.append(Label(item_id=item, accepted=words[word], annotator=annotator, line=line))
    if not labels:
        raise LabelsError(f"{path}: no labels in the file")
    return labels


def _word(raw: object) -> str:
    """A label as a lower-case word: JSON true/false and 1/0 as the words ``true``/``false`` and ``1``/``0``."""
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, int | float) and raw in (0, 1):
        return str(int(raw))
    return str(raw).strip().lower()


def _jsonl_rows(path: Path, text: str) -> list[tuple[int, dict[str, Any]]]:
    rows = []
    for line, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise LabelsError(f"{path}:{line}: not JSON ({exc.msg}, column {exc.colno})") from None
        if not isinstance(row, dict):
            raise LabelsError(f"{path}:{line}: expected a JSON object with item_id and label")
        _known_keys(path, line, row)
        rows.append((line, row))
    return rows


def _csv_rows(path: Path, text: str) -> list[tuple[int, dict[str, Any]]]:
    reader = csv.DictReader(io.StringIO(text))
    fields = reader.fieldnames or []
    if "item_id" not in fields or "label" not in fields:
        raise LabelsError(f"{path}:1: the header needs item_id and label (optional: annotator), got {fields}")
    rows = []
    for row in reader:
        line = reader.line_num
        if None in row:
            raise LabelsError(f"{path}:{line}: more cells than the header has columns")
        _known_keys(path, line, row)
        rows.append((line, dict(row)))
    return rows


def _known_keys(path: Path, line: int, row: Mapping[str, Any]) -> None:
    unknown = sorted(set(row) - KNOWN_KEYS)
    if unknown:
        raise LabelsError(f"{path}:{line}: unknown field {unknown[0]!r} (expected item_id, label, annotator)")
