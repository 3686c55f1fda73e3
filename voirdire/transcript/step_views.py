"""How a protocol's structured steps and verdict read as part of the chat, declared in its display hints.

A protocol records its structured steps with ``session.note(name, **data)``. Without a view, a reader shows such a
step as key/value pairs. A ``StepView`` (in ``DisplayHints.views``, so it travels in the run header and no reader
imports the protocol) says instead which values of the data to show and how: a title, a line of fields, a table
whose rows come from one list of the data, a word diff of a text before and after, and whether the step completes
an earlier step's card (one round's marks added as a column to that round's table of reasons). A ``Column`` names a
value by its key (``a.b`` reaches into objects and lists), its label and its ``Format``.

Everything here is data from a transcript, so nothing in it is trusted: a title's ``{key}`` is replaced by looking
the key up, never by Python's string formatting; a key that names nothing shows as missing.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Tone = Literal["", "good", "bad", "muted"]

Format = Literal[
    "text", "sign", "check", "yesno", "bits", "number", "percent", "list", "trend", "pairs", "refs", "json"
]
"""How a value reads: ``sign`` +1/−1 (a list: each); ``check`` passed/failed; ``yesno`` yes/no; ``bits`` a
characteristic vector (``0110``); ``number`` 3 decimals at most; ``percent``; ``list`` comma-separated; ``trend``
values joined by arrows (a score across rounds); ``pairs`` ``a → b`` pairs (from ``[a, b]`` lists or an object);
``refs`` 0-based indices shown as row numbers (``#1, #3``); ``json`` compact JSON."""

ROW_NUMBER = "#"  # a column key: the row's number, from 1
MAX_CELL = 2000  # characters of one cell; longer values are cut (the full data stays in the transcript)


class Column(BaseModel):
    """One value of a step: its key in the step's data (in a table: in the row; ``/key`` reads the step's data,
    a list indexed by the row), its label and its format; ``missing`` is shown when the value is absent."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    key: str
    label: str = ""
    format: Format = "text"
    missing: str = "–"
    tones: dict[str, Tone] = Field(default_factory=dict, description="a value's text -> its tone (colour)")
    scores: str = Field(
        "", description="format pairs in a table: the row's key of a list of numbers, one per pair, each shown beside "
        "its pair (a pair a line)"
    )  # fmt: skip

    @property
    def heading(self) -> str:
        return self.label or self.key.lstrip("/").replace("_", " ")


class StepView(BaseModel):
    """How one step (by its name in ``session.note``) reads."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    title: str = Field("", description="the card's heading; {key} is replaced by that value of the data")
    fields: tuple[Column, ...] = Field((), description="values shown on one line")
    table: str = Field("", description="key of the rows: a list, or an object whose entries become rows (name)")
    columns: tuple[Column, ...] = ()
    diff: tuple[str, str] | None = Field(None, description="keys of a text before and after: shown as a word diff")
    into: str = Field("", description="an earlier step whose card this one completes (columns: lists, one per row)")
    match: str = Field("", description="with into: the key whose value both steps share (the round)")


class VerdictView(BaseModel):
    """What the verdict shows beside its decision and evidence, from its statistics."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    shows: StepView | None = Field(None, description="the statistics as a card: fields, a table, a diff")
    subject: Column | None = Field(
        None, description="the text examined, shown when it is none of the item's values (a generated claim)"
    )
    gold: str = Field("", description="statistics key holding whether the verdict agrees with the gold label")
    gold_source: str = Field(
        "", description="what the protocol's gold is, as the certificate names its section: \"the dataset's human "
        "judgments\", \"gold answers, alias match\" (empty: \"the protocol's gold\")"
    )
    score: str = Field(
        "", description="statistics key holding the verdict's score, the number its decision thresholds (for AUROC)"
    )


class Views(BaseModel):
    """A protocol's views: its steps by name, its verdict, and the roles whose replies its step cards show (their
    raw replies are folded in the terminal and behind a disclosure in the viewer)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    steps: dict[str, StepView] = Field(default_factory=dict)
    verdict: VerdictView = Field(default_factory=VerdictView)
    folded: tuple[str, ...] = ()


@dataclass(frozen=True)
class Cell:
    text: str
    tone: Tone = ""


@dataclass(frozen=True)
class Change:
    """One stretch of a word diff: ``=`` kept, ``-`` deleted, ``+`` inserted."""

    op: Literal["=", "-", "+"]
    text: str


@dataclass
class Card:
    """A step as a reader shows it: title, fields, table, diff. ``data`` is the step's data as recorded (and the
    data of the steps that completed it), for a reader that offers it on demand."""

    name: str
    title: str
    fields: list[tuple[str, Cell]] = field(default_factory=list)
    headers: list[str] = field(default_factory=list)
    rows: list[list[Cell]] = field(default_factory=list)
    diff: list[Change] | None = None
    data: dict[str, Any] = field(default_factory=dict)


_MISSING = object()
_PLACEHOLDER = re.compile(r"\{([A-Za-z0-9_.]+)\}")


def lookup(data: Any, key: str) -> Any:
    """``a.b.0`` in nested objects and lists; ``_MISSING`` when any part names nothing."""
    value = data
    for part in key.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return _MISSING
    return value


def _number(v: Any) -> str:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return str(v)
    if isinstance(v, int):
        return str(v)
    return f"{v:.3f}".rstrip("0").rstrip(".") if v == v else "nan"


def _plain(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return _number(v)
    if isinstance(v, list):
        return ", ".join(_plain(x) for x in v) if v else "none"
    if isinstance(v, dict):
        return "; ".join(f"{k}: {_plain(x)}" for k, x in v.items())
    return str(v)


def _sign(v: Any) -> Cell:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return Cell(_plain(v))
    return Cell("+1" if v > 0 else "−1" if v < 0 else "0", "good" if v > 0 else "bad" if v else "")


def cell(value: Any, fmt: Format = "text", missing: str = "–", tones: dict[str, Tone] | None = None) -> Cell:
    """One value in its format; ``tones`` colours a value by its text."""
    if value is _MISSING or value is None or value == "" or value == []:
        return Cell(missing, "muted")
    out: Cell
    if fmt == "sign" and isinstance(value, list):
        signs = [_sign(v) for v in value]
        tone = signs[0].tone if len({s.tone for s in signs}) == 1 else ""
        out = Cell(", ".join(s.text for s in signs), tone)
    elif fmt == "sign":
        out = _sign(value)
    elif fmt == "check" and isinstance(value, bool):
        out = Cell("passed" if value else "failed", "good" if value else "bad")
    elif fmt == "yesno" and isinstance(value, bool):
        out = Cell("yes" if value else "no")
    elif fmt == "bits" and isinstance(value, list):
        out = Cell("".join("1" if x else "0" for x in value))
    elif fmt == "number":
        out = Cell(_number(value))
    elif fmt == "percent" and isinstance(value, int | float) and not isinstance(value, bool):
        out = Cell(f"{100 * value:.1f}%")
    elif fmt == "trend" and isinstance(value, list):
        out = Cell(" → ".join(missing if v is None else _number(v) for v in value))
    elif fmt == "pairs" and isinstance(value, list | dict):
        items = value.items() if isinstance(value, dict) else value
        out = Cell("; ".join(f"{_plain(p[0])} → {_plain(p[1])}" if _pair(p) else _plain(p) for p in items))
    elif fmt == "refs" and isinstance(value, list):
        out = Cell(
            ", ".join(f"#{v + 1}" if isinstance(v, int) and not isinstance(v, bool) else _plain(v) for v in value)
        )
    elif fmt == "json":
        out = Cell(json.dumps(value, ensure_ascii=False, default=str))
    else:
        out = Cell(_plain(value))
    if tones and out.text in tones:
        out = Cell(out.text, tones[out.text])
    return out if len(out.text) <= MAX_CELL else Cell(out.text[:MAX_CELL] + "…", out.tone)


def scored_pairs(pairs: list[Any], scores: list[Any], missing: str = "–") -> Cell:
    """Each pair on a line of its own with its score beside it: ``a → b  (0.891)``."""
    lines = []
    for i, p in enumerate(pairs):
        text = f"{_plain(p[0])} → {_plain(p[1])}" if _pair(p) else _plain(p)
        score = scores[i] if i < len(scores) else None
        lines.append(f"{text}  ({missing if score is None else _number(score)})")
    out = "\n".join(lines)
    return Cell(out if len(out) <= MAX_CELL else out[:MAX_CELL] + "…")


def _pair(p: Any) -> bool:
    return isinstance(p, list | tuple) and len(p) == 2


def title_of(view: StepView, name: str, data: dict[str, Any]) -> str:
    if not view.title:
        return name.replace("_", " ")

    def value(m: re.Match[str]) -> str:
        v = lookup(data, m[1])
        return "?" if v is _MISSING or v is None else _plain(v)

    return _PLACEHOLDER.sub(value, view.title)


def _rows(data: dict[str, Any], key: str) -> list[Any]:
    rows = lookup(data, key) if key else _MISSING
    if isinstance(rows, dict):
        return [{"name": k, **v} if isinstance(v, dict) else {"name": k, "value": v} for k, v in rows.items()]
    return rows if isinstance(rows, list) else []


def _row_cell(col: Column, i: int, row: Any, data: dict[str, Any]) -> Cell:
    if col.key == ROW_NUMBER:
        return Cell(str(i + 1), "muted")
    if col.key.startswith("/"):  # the step's data: a list indexed by the row, or {key} of the row in the path
        key = _PLACEHOLDER.sub(lambda m: str(lookup(row, m[1])) if isinstance(row, dict) else "", col.key[1:])
        values = lookup(data, key)
        value = values[i] if isinstance(values, list) and "{" not in col.key else values
    elif isinstance(row, dict):
        value = lookup(row, col.key)
        scores = lookup(row, col.scores) if col.scores else None
        if col.format == "pairs" and isinstance(value, list) and isinstance(scores, list) and value:
            return scored_pairs(value, scores, col.missing)
    else:  # a row that is a plain value: every column but the number shows it
        value = row
    return cell(value, col.format, col.missing, col.tones)


def word_diff(before: str, after: str) -> list[Change]:
    """Words deleted and inserted between two texts (difflib over whitespace-separated words)."""
    a, b = before.split(), after.split()
    out: list[Change] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(Change("=", " ".join(a[i1:i2])))
            continue
        if i2 > i1:
            out.append(Change("-", " ".join(a[i1:i2])))
        if j2 > j1:
            out.append(Change("+", " ".join(b[j1:j2])))
    return out


def _fields(columns: tuple[Column, ...], data: dict[str, Any]) -> list[tuple[str, Cell]]:
    """The fields that have something to show (a column whose ``missing`` is empty is left out when absent)."""
    cells = [(c.heading, cell(lookup(data, c.key), c.format, c.missing, c.tones)) for c in columns]
    return [(label, c) for label, c in cells if c.text]


def card_of(name: str, data: dict[str, Any], view: StepView) -> Card:
    """The card of one step under its view."""
    card = Card(name=name, title=title_of(view, name, data), data={name: data})
    card.fields = _fields(view.fields, data)
    if view.into and not view.table:  # a step that completes another's card, shown alone: its lists as fields
        card.fields = [(c.heading, _joined(lookup(data, c.key.lstrip("/")), c)) for c in view.columns] + card.fields
    if view.table and lookup(data, view.table) is not _MISSING:
        card.headers = [c.heading for c in view.columns]
        card.rows = [
            [_row_cell(c, i, row, data) for c in view.columns] for i, row in enumerate(_rows(data, view.table))
        ]
    if view.diff is not None:
        before, after = (lookup(data, k) for k in view.diff)
        if isinstance(before, str) and isinstance(after, str):
            card.diff = word_diff(before, after)
    return card


def _joined(values: Any, c: Column) -> Cell:
    if not isinstance(values, list):
        return cell(values, c.format, c.missing)
    return Cell(", ".join(cell(v, c.format, c.missing).text for v in values))


def complete(card: Card, name: str, data: dict[str, Any], view: StepView) -> None:
    """A later step adds its columns (lists with one value per row) and fields to ``card``."""
    for c in view.columns:
        values = lookup(data, c.key.lstrip("/"))
        card.headers.append(c.heading)
        for i, row in enumerate(card.rows):
            value = values[i] if isinstance(values, list) and i < len(values) else _MISSING
            row.append(cell(value, c.format, c.missing, c.tones))
    card.fields += _fields(view.fields, data)
    card.data[name] = data


def generic_card(name: str, data: dict[str, Any]) -> Card:
    """A step no view describes: each value as text, objects and lists flattened."""
    return Card(
        name=name, title=name.replace("_", " "), fields=[(k, cell(v)) for k, v in data.items()], data={name: data}
    )
