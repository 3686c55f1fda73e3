"""Replies shaped as data: a JSON object with an answer key, fenced JSON, a bare quoted string.

A model asked for JSON (``{"answer": "no", "explanation": "..."}``) or used to writing it puts its answer in a
key. The answer is that key's value, read like any reply; the explanation is not read (it may quote both answers).
Text outside the object is read too, and must not say anything else ("{...} Actually, on second thought, yes."),
and two objects must agree. A reply cut off inside its object still gives a complete ``"answer": "..."`` pair.

A key that is not an answer key but holds a yes/no value (``{"is_correct": false}``, ``{"correct": "no"}``) is not
the answer: its value is, said of the key's words. It is read as a question answered right away ("is correct? No."),
so the reader reads the key's words as its own and the value flips or keeps them. An answer key holding an object
(``{"verdict": {"label": "incorrect"}}``) gives that object's answer. An object with neither is read by its values
only: its keys are names, not words of the reply.
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
    keyed: tuple[str, ...] = ()  # yes/no values of other keys, as answered questions ("is correct? No.")


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
        except (ValueError, RecursionError):  # not JSON, or nested deeper than the decoder goes
            continue
    return None


_PROSE_KEYS = frozenset(
    {"explanation", "reason", "reasoning", "rationale", "notes", "note", "comment", "justification"}
)
_YES_NO = {"true": "Yes", "false": "No", "yes": "Yes", "no": "No"}
_KEY_WORDS = re.compile(r"[A-Z]?[a-z]+|[0-9]+")


def _answer_of(obj: dict[Any, Any], depth: int = 0) -> tuple[str | None, bool]:
    keys = {str(k).lower(): v for k, v in obj.items()}
    for key in ANSWER_KEYS:
        if key in keys:
            value = keys[key]
            if isinstance(value, dict) and depth < 2:  # {"verdict": {"label": "incorrect"}}
                inner, nested = _answer_of(value, depth + 1)
                keyed = _keyed(value)
                if inner is None and not nested and not keyed and len(value) == 1:
                    inner = _value(next(iter(value.values())))  # {"label": {"name": "neutral"}}
                if inner is None and len(keyed) == 1:
                    return keyed[0], False  # {"verdict": {"correct": false, "confidence": 0.9}}
                return (inner, nested) if inner is not None and not keyed else (None, True)
            return _value(value), isinstance(value, list | dict)
    return None, False


def _keyed(obj: dict[Any, Any]) -> list[str]:
    """Yes/no values of keys that are not answer keys, each as its key's words asked and answered ("is correct?
    No."); the key names what the value says yes or no to."""
    out = []
    for key, value in obj.items():
        said = _YES_NO.get(str(value).lower()) if isinstance(value, bool | str) else None
        if said is None or str(key).lower() in ANSWER_KEYS or str(key).lower() in _PROSE_KEYS:
            continue
        words = " ".join(w.lower() for w in _KEY_WORDS.findall(str(key)))
        if words:
            out.append(f"{words}? {said}.")
    return out


def _strings(value: Any) -> list[str]:
    """The string values of an object, at any depth (its keys are names, not words of the reply)."""
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


def _bare(body: str) -> Shaped | None:
    """A reply that is a JSON string or a JSON boolean as a whole: its own answer; None for any other."""
    if body[0] not in "\"'" and body not in ("true", "false"):
        return None
    whole = _load(body)
    value = _value(whole)
    return Shaped([value], "") if value is not None and not isinstance(whole, int | float) else None


def shaped(text: str) -> Shaped:
    """The answer keys' values of the JSON objects in ``text`` (code fences dropped), and the text around them.

    A whole reply that is a JSON string or a bare value (``"Incorrect"``, ``true``) is its own answer."""
    body = _FENCE.sub("", text).strip()
    if not body:
        return Shaped([], "")
    bare = _bare(body)
    if bare is not None:
        return bare
    answers: list[str] = []
    keyed: list[str] = []
    rest: list[str] = []
    several = False
    end = 0
    whole = _load(body) if body[0] == "{" else None
    objects = [(0, len(body), whole)] if isinstance(whole, dict) else _objects(body)
    for start, stop, obj in objects:
        value, nested = _answer_of(obj)
        pairs = _keyed(obj)
        if value is None and not nested:
            if pairs:
                keyed.extend(pairs)
            elif isinstance(whole, dict):
                return Shaped([], "\n".join(_strings(whole)))  # read its values only
            else:
                continue
        several = several or nested
        if value is not None:
            answers.append(value)
            keyed.extend(pairs)
        rest.append(body[end:start])
        end = stop
    if not answers and not several and not keyed:
        cut = _cut_off(body)
        if cut is not None:
            return cut
        return Shaped([], text)
    rest.append(body[end:])
    return Shaped(answers, "\n".join(rest), several, tuple(keyed))


def _objects(body: str) -> list[tuple[int, int, dict[Any, Any]]]:
    out = []
    for m in _OBJECT.finditer(body):
        obj = _load(m.group(0))
        if isinstance(obj, dict):
            out.append((m.start(), m.end(), obj))
    return out


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
