"""Each reader of the corpus, as a function of a corpus row: its value as a label, or "refuse"."""

from __future__ import annotations

from typing import Any

from voirdire.protocol import ParseError
from voirdire.protocols.cross_examination.parsing import parse_decision, parse_yes_no
from voirdire.protocols.no_data.llm import parse_datapoint, parse_label
from voirdire.protocols.oracle_checker.paraphrase import read_yes_no
from voirdire.protocols.qa_entailment.parsing import (
    CLOSENESS_SCALE,
    DIFFICULTY_SCALE,
    ParseFailure,
    parse_entailment,
    parse_score,
    parse_statement,
)
from voirdire.protocols.qa_entailment.partial_marks import parse_explanation

SCALES = {"difficulty": DIFFICULTY_SCALE, "closeness": CLOSENESS_SCALE, "none": None}


def _value(row: dict[str, Any]) -> object:
    reader, text = row["reader"], row["text"]
    if reader == "decision":
        return parse_decision(text)
    if reader == "yes_no":
        return "yes" if parse_yes_no(text) else "no"
    if reader == "paraphrase":
        return read_yes_no(text).answer
    if reader == "entailment":
        return parse_entailment(text)
    if reader == "score":
        return parse_score(text, scale=SCALES[row["scale"]])
    if reader == "statement":
        return parse_statement(text)
    if reader == "explanation":
        value = parse_explanation(text)
        return value if isinstance(value, ParseFailure) else f"{value.n_steps}/{value.n_info}/{value.n_assumption}"
    if reader == "label":
        return parse_label(text, row["x"])
    if reader == "datapoint":
        return parse_datapoint(text, x=row["x"])
    raise KeyError(reader)


def read(row: dict[str, Any]) -> str:
    try:
        value = _value(row)
    except ParseError:
        return "refuse"
    return "refuse" if value is None or isinstance(value, ParseFailure) else str(value)
