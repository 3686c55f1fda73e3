"""Datasets for QA grading: EVOUNA (Wang et al. 2023) and a generic JSONL format.

Every loader returns ``QAItem``s: one (question, gold answers, system answer, optional human judgment) to grade.
A malformed row raises ``DatasetError`` naming the file and the row as every voirdire input error does:
``NQ.json[17]: ...`` (EVOUNA: 0-based index in the JSON list) and ``runs.jsonl:3: ...`` (JSONL: 1-based line), so
a bad record is found without bisecting the file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, ValidationError

from voirdire.kit.data import DatasetError, read_records

# EVOUNA's five QA systems, in the column order of the paper's Table 1.
EVOUNA_SYSTEMS: tuple[str, ...] = ("fid", "gpt35", "chatgpt", "gpt4", "newbing")
# Names the paper's tables use for them (gpt35 is text-davinci-003, "InstructGPT" in the paper).
EVOUNA_SYSTEM_NAMES: dict[str, str] = {
    "fid": "DPR-FiD",
    "gpt35": "InstructGPT",
    "chatgpt": "ChatGPT",
    "gpt4": "GPT-4",
    "newbing": "BingChat",
}
# EVOUNA joins a question's gold answers with "/" (SOURCE.md; Wang et al.'s prompts say "split with /").
EVOUNA_GOLD_SEPARATOR = "/"


def bad_data(path: str | Path, problem: str, *, line: int | None = None, index: int | None = None) -> DatasetError:
    """The error for a malformed dataset file or row: ``file:line: problem`` (a line of the file),
    ``file[index]: problem`` (a row of a JSON list) or ``file: problem``."""
    where = f":{line}" if line is not None else f"[{index}]" if index is not None else ""
    return DatasetError(f"{path}{where}: {problem}")


def _text(path: Path) -> str:
    """The file as UTF-8 text; a file that is not names the line of its first bad byte."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise bad_data(path, "no such dataset file") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise bad_data(path, f"not UTF-8 text (byte 0x{data[exc.start]:02x}); save it as UTF-8", line=line) from None


class QAItem(BaseModel):
    """One system answer to grade against a question's gold answers."""

    model_config = ConfigDict(frozen=True)

    # Unique per (question, system) within a dataset; the session id of the item's transcript.
    id: str
    question: str
    gold_answers: tuple[str, ...]
    system: str
    system_answer: str
    human_judgment: bool | None = None
    # Where the item came from ("NQ.json row 17"), for error messages and transcripts.
    source: str = ""


def split_gold(golden_answer: str, separator: str = EVOUNA_GOLD_SEPARATOR) -> tuple[str, ...]:
    """Split EVOUNA's joined gold answers. Pieces are kept as they are (even empty ones) because Wang et al.'s
    lexical match sees exactly these pieces; evaluators that cannot use an empty piece skip it themselves."""
    return tuple(golden_answer.split(separator))


# --- EVOUNA ---------------------------------------------------------------------------------------------------

# Judgments are JSON booleans; unjudged is null in NQ.json and the string "nan" in TQ.json (SOURCE.md).
_Judgment = StrictBool | None | Literal["nan"]


class _EvounaRow(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    question: StrictStr
    golden_answer: StrictStr | None
    answer_fid: StrictStr | None
    judge_fid: _Judgment
    answer_gpt35: StrictStr | None
    judge_gpt35: _Judgment
    answer_chatgpt: StrictStr | None
    judge_chatgpt: _Judgment
    answer_gpt4: StrictStr | None
    judge_gpt4: _Judgment
    answer_newbing: StrictStr | None
    judge_newbing: _Judgment
    improper: StrictBool


def _describe(err: ValidationError) -> str:
    parts = []
    for e in err.errors(include_url=False):
        field = ".".join(str(x) for x in e["loc"]) or "row"
        parts.append(f"field {field!r}: {e['msg']}")
    return "; ".join(parts)


def load_evouna(
    path: str | Path,
    *,
    systems: tuple[str, ...] | list[str] | None = None,
    include_improper: bool = False,
    require_judgment: bool = True,
) -> list[QAItem]:
    """Load EVOUNA NQ.json / TQ.json as items, row-major (all systems of row 0, then row 1, ...).

    Following the paper (§2: "3,020 questions from NQ and 1,938 from TQ") and Wang et al., questions flagged
    ``improper`` are excluded unless ``include_improper``. A pair whose human judgment is null / "nan" is
    skipped when ``require_judgment`` (it cannot be scored against humans). A null system answer becomes ""
    (one NQ DPR-FiD answer is null but judged incorrect, so the pair stays in the evaluation).
    """
    path = Path(path)
    wanted = tuple(systems) if systems else EVOUNA_SYSTEMS
    unknown = [s for s in wanted if s not in EVOUNA_SYSTEMS]
    if unknown:
        raise ValueError(f"unknown EVOUNA system(s) {unknown}; expected some of {list(EVOUNA_SYSTEMS)}")
    try:
        rows = json.loads(_text(path))
    except json.JSONDecodeError as e:
        raise bad_data(path, f"invalid JSON: {e.msg} (column {e.colno})", line=e.lineno) from e
    if not isinstance(rows, list):
        raise bad_data(path, f"expected a JSON list of rows at the top level, got {type(rows).__name__}")

    items: list[QAItem] = []
    for index, raw in enumerate(rows):
        if not isinstance(raw, dict):
            raise bad_data(path, f"expected an object, got {type(raw).__name__}", index=index)
        try:
            row = _EvounaRow.model_validate(raw)
        except ValidationError as e:
            raise bad_data(path, _describe(e), index=index) from None
        if row.improper and not include_improper:
            continue
        if row.golden_answer is None:
            # One improper NQ question lacks gold answers; nothing can grade it. A proper one must have them.
            if row.improper:
                continue
            raise bad_data(path, "field 'golden_answer' is null on a question that is not improper", index=index)
        golds = split_gold(row.golden_answer)
        for system in wanted:
            judge = getattr(row, f"judge_{system}")
            judgment = None if judge is None or judge == "nan" else bool(judge)
            if judgment is None and require_judgment:
                continue
            answer = getattr(row, f"answer_{system}")
            items.append(
                QAItem(
                    id=f"{path.stem}-{index}-{system}",
                    question=row.question,
                    gold_answers=golds,
                    system=system,
                    system_answer=answer if answer is not None else "",
                    human_judgment=judgment,
                    source=f"{path.name} row {index}",
                )
            )
    return items


# --- generic JSONL --------------------------------------------------------------------------------------------


class _JsonlRow(BaseModel):
    # extra="forbid": a misspelt optional key (say "human_judgement") must fail loudly, not drop the judgments.
    model_config = ConfigDict(extra="forbid", strict=True)

    id: StrictStr | None = None
    question: StrictStr
    gold_answers: list[StrictStr] = Field(min_length=1)
    system_answer: StrictStr
    system: StrictStr = "system"
    human_judgment: StrictBool | None = None
    meta: dict[str, Any] | None = None


def load_jsonl(path: str | Path, *, require_judgment: bool = False) -> list[QAItem]:
    """Load the generic format: one JSON object per line with ``question`` (str), ``gold_answers`` (non-empty
    list of str), ``system_answer`` (str), and optionally ``id``, ``system`` (default "system"),
    ``human_judgment`` (bool or null) and ``meta`` (free-form object). Blank lines are skipped."""
    path = Path(path)
    return _generic_items(path, _jsonl_rows(path), require_judgment=require_judgment)


def _jsonl_rows(path: Path) -> Iterable[tuple[int, dict[str, Any]]]:
    for lineno, line in enumerate(_text(path).split("\n"), start=1):  # not splitlines(): JSON may hold U+2028
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as e:
            raise bad_data(path, f"invalid JSON: {e.msg} (column {e.colno})", line=lineno) from e
        if not isinstance(raw, dict):
            raise bad_data(path, f"expected a JSON object, got {type(raw).__name__}", line=lineno)
        yield lineno, raw


def load_table(path: str | Path, *, fields: dict[str, str] | None = None) -> list[QAItem]:
    """The generic format's records from a Parquet file or a folder ``datasets``' ``save_to_disk`` wrote (read by
    ``voirdire.kit.read_records``; ``fields`` maps the format's fields to other column names); rows are numbered
    from 1 in errors and default ids, as lines are."""
    path = Path(path)
    rows = ((n, rec) for n, (_, rec) in enumerate(read_records(path, fields), start=1))
    return _generic_items(path, rows, require_judgment=False, row_word="row")


def _generic_items(
    path: Path, rows: Iterable[tuple[int, dict[str, Any]]], *, require_judgment: bool, row_word: str = "line"
) -> list[QAItem]:
    items: list[QAItem] = []
    seen_ids: dict[str, int] = {}
    for lineno, raw in rows:
        at: dict[str, int] = {"line": lineno} if row_word == "line" else {"index": lineno - 1}
        if row_word == "row":  # a table has every column in every row, null where a row has no value
            raw = {k: v for k, v in raw.items() if v is not None}
        try:
            row = _JsonlRow.model_validate(raw)
        except ValidationError as e:
            raise bad_data(path, _describe(e), **at) from None
        if not any(g.strip() for g in row.gold_answers):
            raise bad_data(path, "field 'gold_answers': every gold answer is blank", **at)
        if row.human_judgment is None and require_judgment:
            raise bad_data(path, "field 'human_judgment' is required here but missing or null", **at)
        item_id = row.id if row.id is not None else f"{path.stem}-{lineno}"
        if item_id in seen_ids:
            raise bad_data(path, f"duplicate id {item_id!r} (first on {row_word} {seen_ids[item_id]})", **at)
        seen_ids[item_id] = lineno
        items.append(
            QAItem(
                id=item_id,
                question=row.question,
                gold_answers=tuple(row.gold_answers),
                system=row.system,
                system_answer=row.system_answer,
                human_judgment=row.human_judgment,
                source=f"{path.name} {row_word} {lineno}",
            )
        )
    return items


def select_systems(values: Iterable[str], *, evouna: bool) -> list[str] | None:
    """QA systems named by repeated or comma-separated values; None (every system) for none or "all". EVOUNA's
    systems may also be named as the paper's tables name them ("DPR-FiD", "GPT-4"). Raises ``ValueError``
    naming an unknown EVOUNA system."""
    names = [s.strip() for v in values for s in v.split(",") if s.strip()]
    if not names or any(n.lower() == "all" for n in names):
        return None
    if not evouna:
        return list(dict.fromkeys(names))
    by_name = {v.lower(): k for k, v in EVOUNA_SYSTEM_NAMES.items()} | {k: k for k in EVOUNA_SYSTEM_NAMES}
    unknown = [n for n in names if n.lower() not in by_name]
    if unknown:
        raise ValueError(
            f"unknown EVOUNA system(s) {unknown}: use {', '.join(EVOUNA_SYSTEM_NAMES)} "
            f"or {', '.join(EVOUNA_SYSTEM_NAMES.values())}"
        )
    return list(dict.fromkeys(by_name[n.lower()] for n in names))


def load_dataset(path: str | Path, *, systems: tuple[str, ...] | list[str] | None = None) -> list[QAItem]:
    """Pick the loader by suffix: ``.json`` is EVOUNA (NQ.json / TQ.json), ``.jsonl`` the generic format.

    ``systems`` filters EVOUNA's systems and, for JSONL, the ``system`` field."""
    path = Path(path)
    if path.suffix == ".json":
        return load_evouna(path, systems=systems)
    if path.suffix in (".jsonl", ".parquet") or path.is_dir():
        items = load_jsonl(path) if path.suffix == ".jsonl" else load_table(path)
        if systems:
            items = [it for it in items if it.system in systems]
        return items
    raise bad_data(
        path, "unknown format: expected .json (EVOUNA), .jsonl, .parquet or a datasets folder (generic)"
    )
