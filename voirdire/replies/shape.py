"""Replies shaped as data: a JSON object with an answer key, fenced JSON, a bare quoted string.

A model asked for JSON (``{"answer": "no", "explanation": "..."}``) or used to writing it puts its answer in a
key. The answer is that key's value, read like any reply; the explanation is not read (it may quote both answers).
Text outside the object is read too, and must not say anything else ("{...} Actually, on second thought, yes."),
and two objects must agree. A reply cut off inside its object still gives a complete ``"answer": "..."`` pair.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

# Keys a reply names its answer by, first found wins.
_FIRST_KEYS = ("answer", "label", "decision", "verdict", "score", "rating", "result", "prediction")
ANSWER_KEYS = (*_FIRST_KEYS, "classification", "relation", "relationship", "output")
_FENCE = re.compile(r"```[a-zA-Z]*[ \t]*\n?")
_OBJECT = re.compile(r"\{[^{}]*\}")  # flat objects only: no nested braces, so the search stays linear
_PAIR = re.compile(
    r"""["']([a-zA-Z_]{1,20})["']\s*:\s*(?:"([^"\n]{0,200})"|'([^'\n]{0,200})'|(-?\d{1,9})\b|(true|false)\b)"""
)


@dataclass(frozen=True, slots=True)
class Shaped:
    """The answers found in data-shaped parts of a reply, and the rest of the reply to read as prose."""

    answers: list[str]
    rest: str
    several: bool = False  # a value that is a list or an object: no single answer


def _value(value: Any) -> str | None:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return value
    return None


def _load(text: str) -> Any:
    """JSON, or a Python-style object in single quotes ({'answer': 'yes'}) when swapping the quotes makes it JSON."""
    for candidate in (text, text.replace("'", '"') if '"' not in text else None):
        if candidate is None:
            continue
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    return None


def _answer_of(obj: dict[Any, Any]) -> tuple[str | None, bool]:
    keys = {str(k).lower(): v for k, v in obj.items()}
    for key in ANSWER_KEYS:
        if key in keys:
            value = keys[key]
            return _value(value), isinstance(value, list | dict)
    return None, False


def shaped(text: str) -> Shaped:
    """The answer keys' values of the JSON objects in ``text`` (code fences dropped), and the text around them.

    A whole reply that is a JSON string or a bare value (``"Incorrect"``, ``true``) is its own answer."""
    body = _FENCE.sub("", text).strip()
    if not body:
        return Shaped([], "")
    if body[0] in "\"'" or body in ("true", "false"):
        whole = _load(body)
        value = _value(whole)
        if value is not None and not isinstance(whole, int | float):
            return Shaped([value], "")
    answers: list[str] = []
    rest: list[str] = []
    several = False
    end = 0
    for m in _OBJECT.finditer(body):
        obj = _load(m.group(0))
        if not isinstance(obj, dict):
            continue
        value, nested = _answer_of(obj)
        if value is None and not nested:
            continue
        several = several or nested
        if value is not None:
            answers.append(value)
        rest.append(body[end : m.start()])
        end = m.end()
    if not answers and not several:
        cut = _cut_off(body)
        if cut is not None:
            return cut
        return Shaped([], text)
    rest.append(body[end:])
    return Shaped(answers, "\n".join(rest), several)


def _cut_off(body: str) -> Shaped | None:
    """A reply that opens an object and never closes it: its complete answer pair, if it has one."""
    start = body.find("{")
    if start < 0 or "}" in body[start:]:
        return None
    for m in _PAIR.finditer(body, start):
        if m.group(1).lower() in ANSWER_KEYS:
            value = next(g for g in m.groups()[1:] if g is not None)
            return Shaped([{"true": "yes", "false": "no"}.get(value, value)], body[:start])
    return None
