"""Strict readers of the QA-evaluation replies: entailment labels, QA2D statements and 1–5 scores.

A reply that does not say exactly one thing returns a ``ParseFailure`` (never a default value), so the caller
records it and the item's outcome is "undetermined" rather than silently wrong. (The authors' released notebooks
test ``'entailment' in reply.lower()``, which reads "not entailment" as entailment; we deliberately do not.) The
entailment label and the scores are closed answers, read by the core reader (``voirdire.replies``) with this
protocol's words and scales; the QA2D statement (Table 14) is this protocol's own, read here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel

from voirdire.kit import ParseError
from voirdire.kit.replies import Labels, read_label, read_number

EntailmentLabel = Literal["entailment", "contradiction", "neutral"]
ENTAILMENT_LABELS: tuple[EntailmentLabel, ...] = ("entailment", "contradiction", "neutral")


class ParseFailure(BaseModel):
    """A model reply that the named parser could not read; ``raw`` is the reply as received."""

    parser: str
    reason: str
    raw: str


# Table 14's labels and their word forms; "entail" runs from the premise to the hypothesis, "contradict" either way.
ENTAILMENT = Labels(
    names=ENTAILMENT_LABELS,
    forms=(
        ("entailment", "entailment", "noun"),
        ("entailments", "entailment", "noun"),
        ("contradiction", "contradiction", "noun"),
        ("contradictions", "contradiction", "noun"),
        ("neutral", "neutral", "noun"),
        ("neutrality", "neutral", "noun"),
        ("entail", "entailment", "verb"),
        ("entails", "entailment", "verb"),
        ("entailing", "entailment", "verb"),
        ("entailed", "entailment", "passive"),
        ("contradict", "contradiction", "symmetric"),
        ("contradicts", "contradiction", "symmetric"),
        ("contradicting", "contradiction", "symmetric"),
        ("contradicted", "contradiction", "symmetric_passive"),
        ("contradictory", "contradiction", "adjective"),
    ),
    source=("premise", "s1"),
    target=("hypothesis", "s2"),
    echo_fields=("premise", "hypothesis", "s1", "s2"),
)


def parse_entailment(reply: str) -> EntailmentLabel | ParseFailure:
    """Read the Table 14 entailment-test reply: which of "entailment", "contradiction", "neutral" it gives
    (``voirdire.replies.read_label``)."""
    try:
        return read_label(reply, ENTAILMENT)  # type: ignore[return-value]
    except ParseError as exc:
        return ParseFailure(parser="entailment", reason=str(exc), raw=reply)


# ---------------------------------------------------------------------------------------------------- QA2D

# Wrappers a chat model puts around a one-word answer: markdown emphasis/code, quotes, trailing punctuation.
_WRAPPERS = "*_`\"'“”‘’ \t"
_PAIRS = (('"', '"'), ("“", "”"), ("'", "'"), ("‘", "’"), ("`", "`"), ("**", "**"), ("__", "__"), ("*", "*"))


def _clean_line(line: str) -> str:
    line = line.strip().strip(_WRAPPERS)
    line = line.rstrip(".!:;, \t").strip(_WRAPPERS)
    return line


def _unwrap(text: str) -> str:
    """Markdown emphasis, code marks or quotes around the whole text, removed as pairs (an inner quote stays)."""
    text = text.strip()
    changed = True
    while changed:
        changed = False
        for left, right in _PAIRS:
            if len(text) > len(left) + len(right) and text.startswith(left) and text.endswith(right):
                text = text[len(left) : -len(right)].strip()
                changed = True
    return text


# "S:", "Statement:", "Declarative statement:" (markdown around the marker allowed).
_STATEMENT_PREFIX = re.compile(
    r"^\s*(\*\*|__)?\s*(?:s|(?:the\s+)?(?:declarative\s+)?statement)\s*:\s*(?(1)(?:\*\*|__)?)\s*", re.IGNORECASE
)
# A lead-in before the statement: "Sure! Here's the statement:", "Here is the declarative statement:",
# "The statement is:" (the statement may follow on the same line).
_LEAD_IN = re.compile(
    r"^\s*(\*\*|__)?\s*(?:(?:sure|okay|ok|certainly|of course)[!,.]?\s*)?(?:here\s+is|here's|here\s+it\s+is|this\s+is)?"
    r"\s*(?:the|a|your|my)?\s*(?:converted\s+|declarative\s+)*statement(?:\s+is)?\s*:\s*(?(1)(?:\*\*|__)?)\s*",
    re.IGNORECASE,
)
_FIELD = re.compile(r"^[*_\s]*([a-z])[*_\s]*:", re.IGNORECASE)  # "Q:", "A:", "S:", or an invented "C:", "R:"
_BARE_FIELD = re.compile(r"^[*_\s]*[qas][*_\s]*:[*_\s]*$", re.IGNORECASE)


def parse_statement(reply: str) -> str | ParseFailure:
    """Read the Table 14 QA2D reply: the declarative statement it gives.

    One line, optionally after "S:" / "Statement:" or a lead-in ("Here is the statement:"), in quotes or markdown
    emphasis: "S: The TV show is filmed on Oak Island." reads as "The TV show is filmed on Oak Island.". The few-shot
    pattern may be carried on: a reply that re-emits the answer line first ("A: Cyrus\\nS: Cyrus wrote it.") gives
    the "S:" line, and a complete new "Q:"/"A:" block after the statement is cut off. Anything else fails: an empty
    reply, a question, an echoed "Q:" or "A:" line, a field the pattern does not have ("C: ..."), a second
    candidate statement ("W.C.R.E.\\nS: The first Nobel Prize ..."), or any other extra line ("I hope this helps!").
    The reply's content is not judged: whether the statement says what the pair says is the entailment test's job.
    """
    lines = [ln.strip() for ln in reply.splitlines() if ln.strip()]
    if not lines:
        return ParseFailure(parser="statement", reason="empty reply", raw=reply)
    lead = _LEAD_IN.match(lines[0])
    if lead:
        rest_of_line = lines[0][lead.end() :].strip()
        lines = [rest_of_line, *lines[1:]] if rest_of_line else lines[1:]
        if not lines:
            return ParseFailure(parser="statement", reason="a lead-in and no statement", raw=reply)
    first_field = _FIELD.match(lines[0])
    if first_field and first_field.group(1).lower() == "a" and len(lines) > 1:
        second = _FIELD.match(lines[1])
        if second and second.group(1).lower() == "s":
            lines = lines[1:]  # the answer line of the pattern re-emitted, then the statement
    rest = lines[1:]
    while rest and _BARE_FIELD.match(rest[-1]):
        rest = rest[:-1]  # a pattern marker with nothing after it ("S:") adds no candidate
    if rest:
        fields = [(m.group(1).lower() if (m := _FIELD.match(ln)) else "") for ln in rest]
        if not (fields[0] == "q" and "a" in fields[1:]):
            return ParseFailure(parser="statement", reason="more than one line; expected the statement only", raw=reply)
    first = lines[0]
    field = _FIELD.match(first)
    if field and field.group(1).lower() != "s":
        what = "a Q:/A: line" if field.group(1).lower() in "qa" else f"a {field.group(1).upper()}: line"
        return ParseFailure(parser="statement", reason=f"reply gives {what} instead of a statement", raw=reply)
    statement = _unwrap(_STATEMENT_PREFIX.sub("", first, count=1))
    if not statement or not statement.strip(_WRAPPERS + ".:"):
        return ParseFailure(parser="statement", reason="empty statement", raw=reply)
    if statement.endswith("?"):
        return ParseFailure(parser="statement", reason="a question, not a declarative statement", raw=reply)
    if statement.endswith(":"):
        return ParseFailure(parser="statement", reason="a lead-in to something else, not a statement", raw=reply)
    return statement


# ---------------------------------------------------------------------------------------------------- scores

# The Table 17 five-point scales, as the prompts print them ("5: Very hard", "5: The AI-generated answer is
# completely right."). A reply may echo its number's line; the label must then be that number's.
DIFFICULTY_SCALE: dict[int, str] = {
    1: "Very easy",
    2: "Easy",
    3: "Neither easy nor hard",
    4: "Hard",
    5: "Very hard",
}
CLOSENESS_SCALE: dict[int, str] = {
    1: "The AI-generated answer is completely wrong.",
    2: "The AI-generated answer is mostly wrong.",
    3: "The AI-generated answer is neither wrong nor right.",
    4: "The AI-generated answer is mostly right.",
    5: "The AI-generated answer is completely right.",
}
# A subject the model may keep or drop when it echoes a scale line ("5: completely right").


def parse_score(
    reply: str, *, low: int = 1, high: int = 5, scale: Mapping[int, str] | None = None
) -> int | ParseFailure:
    """Read a Table 17 five-point reply ("Return a number from 1 to 5 only"): the one integer in [low, high] it gives
    (``voirdire.replies.read_number``), with the prompt's ``scale`` (``DIFFICULTY_SCALE``, ``CLOSENESS_SCALE``)."""
    try:
        others = tuple(sc for sc in (DIFFICULTY_SCALE, CLOSENESS_SCALE) if sc is not scale)
        return read_number(reply, low, high, scale, others)
    except ParseError as exc:
        return ParseFailure(parser="score", reason=str(exc), raw=reply)
