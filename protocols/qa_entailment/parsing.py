"""Strict parsers for model replies: entailment labels, QA2D statements and 1–5 scores.

A reply that does not say exactly one thing returns a ``ParseFailure`` (never a default value), so the caller
records it and the item's outcome is "undetermined" rather than silently wrong. In particular "not entailment",
"entailment or neutral" and an echo of the question "Is it entailment, contradiction, or neutral?" are failures.
(The authors' released notebooks test ``'entailment' in reply.lower()``, which would read "not entailment" as
entailment; we deliberately do not.)
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel

EntailmentLabel = Literal["entailment", "contradiction", "neutral"]
ENTAILMENT_LABELS: tuple[EntailmentLabel, ...] = ("entailment", "contradiction", "neutral")


class ParseFailure(BaseModel):
    """A model reply that the named parser could not read; ``raw`` is the reply as received."""

    parser: str
    reason: str
    raw: str


# Wrappers a chat model puts around a one-word answer: markdown emphasis/code, quotes, trailing punctuation.
_WRAPPERS = "*_`\"'“”‘’ \t"


def _clean_line(line: str) -> str:
    line = line.strip().strip(_WRAPPERS)
    line = line.rstrip(".!:;, \t").strip(_WRAPPERS)
    return line


def _first_line(text: str) -> tuple[str, list[str]]:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return (lines[0], lines[1:]) if lines else ("", [])


_LABEL_WORD = re.compile(r"\b(entailment|contradiction|neutral)\b", re.IGNORECASE)
# Short lead-ins accepted before the label; anything else on the line (negation, hedging, two labels) fails.
_LABEL_LINE = re.compile(
    r"^(?:(?:answer|label|prediction|relation|result)\s*[:\-]\s*|(?:the\s+)?answer\s+is\s*:?\s*|it\s+is\s+)?"
    r"[\"'“”‘’*_`]*(entailment|contradiction|neutral)$",
    re.IGNORECASE,
)


def parse_entailment(reply: str) -> EntailmentLabel | ParseFailure:
    """Read the Table 14 entailment-test reply: exactly "entailment", "contradiction" or "neutral".

    The first non-empty line must be the label, optionally wrapped in quotes/markdown, ended by punctuation, or
    introduced by a short lead-in ("Answer:", "The answer is"). Later lines (an explanation the prompt asked
    the model not to give) are ignored unless they name a different label, which makes the reply ambiguous.
    """
    first, rest = _first_line(reply)
    if not first:
        return ParseFailure(parser="entailment", reason="empty reply", raw=reply)
    match = _LABEL_LINE.match(_clean_line(first))
    if match is None:
        return ParseFailure(
            parser="entailment",
            reason='first line is not exactly one of "entailment", "contradiction", "neutral"',
            raw=reply,
        )
    label = match.group(1).lower()
    others = {m.lower() for ln in rest for m in _LABEL_WORD.findall(ln)} - {label}
    if others:
        return ParseFailure(
            parser="entailment",
            reason=f"reply names {label!r} and also {sorted(others)}",
            raw=reply,
        )
    return label  # type: ignore[return-value]  # one of ENTAILMENT_LABELS by the regex


_STATEMENT_PREFIX = re.compile(r"^\s*(?:s|statement)\s*:\s*", re.IGNORECASE)
# The QA2D prompt is a Q:/A:/S: pattern; a model may carry on with a new "Q:" block after its statement.
_FEWSHOT_LINE = re.compile(r"^\s*(?:q|a|s)\s*:", re.IGNORECASE)
_NEW_BLOCK = re.compile(r"^\s*q\s*:", re.IGNORECASE)


def parse_statement(reply: str) -> str | ParseFailure:
    """Read the Table 14 QA2D reply: a single declarative sentence (a leading "S:" is dropped).

    Extra lines are allowed only when they continue the few-shot pattern with a new block (the next line starts
    with "Q:"), which is cut off; any other extra text, an empty reply, an echoed "Q:"/"A:" line or a question
    fails. A second line starting with "S:" or "A:" fails too: the reply then holds two candidate statements
    (SmolLM2-135M answers "W.C.R.E.\nS: The first Nobel Prize ..."), and picking one would be a guess.
    """
    text = reply.strip()
    if not text:
        return ParseFailure(parser="statement", reason="empty reply", raw=reply)
    text = _STATEMENT_PREFIX.sub("", text, count=1)
    first, rest = _first_line(text)
    if rest and not _NEW_BLOCK.match(rest[0]):
        return ParseFailure(parser="statement", reason="more than one line; expected the statement only", raw=reply)
    if _FEWSHOT_LINE.match(first):
        return ParseFailure(parser="statement", reason="reply repeats a Q:/A: line instead of a statement", raw=reply)
    statement = first.strip().strip('"“”`').strip()
    if not statement:
        return ParseFailure(parser="statement", reason="empty statement", raw=reply)
    if statement.endswith("?"):
        return ParseFailure(parser="statement", reason="a question, not a declarative statement", raw=reply)
    return statement


_SCORE_LINE = re.compile(
    r"^(?:(?:score|rating|difficulty)\s*[:=\-]?\s*)?(\d+)(?:\s*(?:/|out\s+of)\s*5)?$", re.IGNORECASE
)


def parse_score(reply: str, *, low: int = 1, high: int = 5) -> int | ParseFailure:
    """Read a Table 17 five-point reply ("Return a number from 1 to 5 only"): one integer in [low, high].

    "4", "4.", "Score: 4" and "4/5" parse; "3 or 4", "6", "four" and text around the number fail.
    """
    first, rest = _first_line(reply)
    if not first:
        return ParseFailure(parser="score", reason="empty reply", raw=reply)
    match = _SCORE_LINE.match(_clean_line(first))
    if match is None:
        return ParseFailure(parser="score", reason=f"first line is not a single number from {low} to {high}", raw=reply)
    value = int(match.group(1))
    if not low <= value <= high:
        return ParseFailure(parser="score", reason=f"{value} is outside {low}..{high}", raw=reply)
    if any(_SCORE_LINE.match(_clean_line(ln)) for ln in rest):
        return ParseFailure(parser="score", reason="a second score follows the first", raw=reply)
    return value
