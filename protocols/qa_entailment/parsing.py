"""Strict parsers for model replies: entailment labels, QA2D statements and 1–5 scores.

A reply that does not say exactly one thing returns a ``ParseFailure`` (never a default value), so the caller
records it and the item's outcome is "undetermined" rather than silently wrong. In particular "not entailment",
"entailment or neutral" and an echo of the question "Is it entailment, contradiction, or neutral?" are failures.
(The authors' released notebooks test ``'entailment' in reply.lower()``, which would read "not entailment" as
entailment; we deliberately do not.)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
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


# A negation right before a label word in an explanation line: "(no contradiction)", "is not neutral",
# "there is no contradiction", "without any contradiction", "nor a contradiction".
_NEGATION = re.compile(
    r"\b(?:no|not|nor|without|never|neither|isn't|isn’t|doesn't|doesn’t)\s+(?:(?:a|an|any|the)\s+)?\W*$",
    re.IGNORECASE,
)


def parse_entailment(reply: str) -> EntailmentLabel | ParseFailure:
    """Read the Table 14 entailment-test reply: exactly "entailment", "contradiction" or "neutral".

    The first non-empty line must be the label, optionally wrapped in quotes/markdown, ended by punctuation, or
    introduced by a short lead-in ("Answer:", "The answer is"). Later lines (an explanation the prompt asked
    the model not to give) are ignored unless they name a different label, which makes the reply ambiguous, or
    negate the first line's. A label word right after a negation ("(no contradiction)", "it is not neutral")
    names no label, so "Entailment\nS1 states it outright (no contradiction)." reads as entailment. The first
    line itself is never read past a negation: "not entailment" fails.
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
    named, negated = set(), set()
    for line in rest:
        for m in _LABEL_WORD.finditer(line):
            word = m.group(1).lower()
            (negated if _NEGATION.search(line[: m.start()]) else named).add(word)
    if label in negated:
        return ParseFailure(parser="entailment", reason=f"reply says {label!r}, then negates it", raw=reply)
    others = named - {label}
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
_LABEL_SUBJECT = re.compile(r"^(?:the\s+)?(?:ai[-\s]generated\s+|ai\s+)?answer\s+is\s+", re.IGNORECASE)

_SCORE_LINE = re.compile(
    r"^(?:(?:score|rating|difficulty)\s*[:=\-]?\s*)?(\d+)(?:\s*(?:/|out\s+of)\s*5)?"
    r"(?:\s*[:(\-–—]\s*(?P<label>.*))?$",
    re.IGNORECASE,
)


def _label_key(text: str) -> str:
    text = text.strip().strip(_WRAPPERS).rstrip(").!:;, \t").strip(_WRAPPERS)
    text = " ".join(text.lower().replace("–", "-").split())
    return _LABEL_SUBJECT.sub("", text)


def _read_score(line: str, low: int, high: int, scale: Mapping[int, str] | None) -> int | str:
    """The score on one line, or why the line is not one."""
    match = _SCORE_LINE.match(_clean_line(line.replace("*", "").replace("`", "")))
    if match is None:
        return f"first line is not a single number from {low} to {high}"
    value = int(match.group(1))
    if not low <= value <= high:
        return f"{value} is outside {low}..{high}"
    label = _label_key(match.group("label") or "")
    if label:
        known = scale is not None and value in scale
        if not known or label != _label_key(scale[value]):  # type: ignore[index]
            why = f"the scale says {scale[value]!r}" if known else "no label is expected"  # type: ignore[index]
            return f"{value} is followed by {label!r}, but {why}"
    return value


def _later_score(line: str, scale: Mapping[int, str] | None) -> int | None:
    """A number on a later line that reads as a score (bare, in any range, or with some scale label), else None."""
    match = _SCORE_LINE.match(_clean_line(line.replace("*", "").replace("`", "")))
    if match is None:
        return None
    label = _label_key(match.group("label") or "")
    labels = {_label_key(text) for text in (scale or {}).values()}
    return int(match.group(1)) if not label or label in labels else None


def parse_score(
    reply: str, *, low: int = 1, high: int = 5, scale: Mapping[int, str] | None = None
) -> int | ParseFailure:
    """Read a Table 17 five-point reply ("Return a number from 1 to 5 only"): one integer in [low, high].

    "4", "4.", "Score: 4", "**2**" and "4/5" parse. With the prompt's ``scale`` (``DIFFICULTY_SCALE``,
    ``CLOSENESS_SCALE``) the number may be followed by ":", "(", "-" or "–" and that number's own label, as a model
    echoing the prompt writes it: "1: Very easy", "5 (completely right)", "Rating: 2 - Easy". A label that is not
    the number's ("4: Very easy"), any other text ("3 or 4", "2 - Easy, I think", "It is a 3"), a number out of
    range, no number ("four") and a later line holding a different score (an echoed scale) fail. A separator with
    nothing after it ("4 -") is the bare number.
    """
    first, rest = _first_line(reply)
    if not first:
        return ParseFailure(parser="score", reason="empty reply", raw=reply)
    value = _read_score(first, low, high, scale)
    if isinstance(value, str):
        return ParseFailure(parser="score", reason=value, raw=reply)
    later = {v for v in (_later_score(ln, scale) for ln in rest) if v is not None}
    if later - {value}:
        return ParseFailure(
            parser="score", reason=f"a second score {sorted(later - {value})} follows {value}", raw=reply
        )
    return value
