"""Reply schemas: what a model's reply must fit, sent to the backend that can enforce it and checked on return.

A ``ReplySchema`` is a pydantic model (a JSON object reply, e.g. DCR's sentence reasons) or a closed choice
(``Literal["correct", "incorrect"]``, Yes/No). On the wire both are JSON schemas, a choice wrapped as
``{"answer": <choice>}`` so that every JSON-capable backend can enforce it: llama.cpp by a grammar compiled from
the schema, an OpenAI-compatible endpoint by ``response_format``, Anthropic by a forced tool (``tool_use``), Ollama
by ``format``; other backends (scripted, human) are validated
like any reply. ``validate`` reads the JSON form, and for a choice also a bare word, so a backend that ignored the
schema still gets a fair reading; anything else is a ``ParseError``. A reasoning block (``<think>...</think>``)
before the answer is left out, and an answer element (``<answer>...</answer>``) is read (``unwrapped``, the rule
every reader shares: ``conclusion.py``).
"""

from __future__ import annotations

import json
import re
import typing
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ValidationError


class ParseError(ValueError):
    """Raised by a reply reader when a model's text does not have the expected form."""


# How a structured call was enforced, recorded per call.
Enforcement = Literal["grammar", "response_format", "tool_use", "format", "validated", "text-fallback"]


_REASONING_TAGS = ("think", "thinking", "reasoning", "reflection", "scratchpad")
_ANSWER_TAGS = ("answer", "verdict", "decision", "final_answer")
_TAG = re.compile(
    r"<(/?)[ \t]*(" + "|".join(_REASONING_TAGS + _ANSWER_TAGS) + r")[ \t]*>",
    re.IGNORECASE,
)


def unwrapped(text: str) -> str:
    """The reply without its reasoning blocks when anything follows them, or the last answer element's text;
    ``ParseError`` for a reasoning block that is never closed (the reply was cut off before its answer)."""
    kept: list[str] = []
    answer: str | None = None
    pos = 0
    opened: str | None = None  # the reasoning tag whose block is open
    answer_start: int | None = None
    inner: list[str] = []
    for m in _TAG.finditer(text):
        closing, name = m.group(1) == "/", m.group(2).lower()
        if opened is not None:
            if closing and name == opened:
                inner.append(text[pos : m.start()])
                opened, pos = None, m.end()
            continue
        if name in _REASONING_TAGS and not closing:
            kept.append(text[pos : m.start()])
            opened, pos = name, m.end()
        elif name in _ANSWER_TAGS and not closing:
            answer_start = m.end()
        elif name in _ANSWER_TAGS and closing and answer_start is not None:
            answer, answer_start = text[answer_start : m.start()], None
    if opened is not None:
        raise ParseError(f"the reply's <{opened}> block is never closed: it was cut off before its answer")
    if answer_start is not None:
        answer = text[answer_start:]  # an unclosed last answer element runs to the end
    if answer is not None and answer.strip():
        return answer.strip()
    return _outside(text, [*kept, text[pos:]], inner, answered=answer is not None)


def _outside(text: str, kept: list[str], inner: list[str], *, answered: bool) -> str:
    """The reply once its reasoning blocks (``inner``) are cut out (``kept``: what was around them): the text
    outside them; the reply as it was when it had no block and no answer element; the reasoning itself when
    nothing is outside it."""
    outside = _TAG.sub(" ", "".join(kept))
    if not inner or outside.strip():
        return outside if inner or answered else text
    return " ".join(inner)  # nothing but reasoning: read it


def _unfenced(text: str) -> str:
    """The reply without a markdown code fence around it (```json ... ```), in one pass: no regular expression
    whose backtracking over a long run of spaces would be quadratic."""
    body = text.strip()
    if body.startswith("```"):
        body = body[3:]
        body = (body[4:] if body.startswith("json") else body).lstrip()
    if body.endswith("```"):
        body = body[:-3].rstrip()
    return body


@dataclass(frozen=True)
class ReplySchema:
    """A named JSON schema with the reader that checks a reply against it."""

    name: str
    schema: dict[str, Any]
    model: type[BaseModel] | None = None
    choices: tuple[str, ...] = ()
    values: tuple[Any, ...] = ()  # what each choice reads as (default: the choice itself)

    @classmethod
    def of(cls, spec: type[BaseModel] | Any | tuple[str, ...]) -> ReplySchema:
        """From a pydantic model, a ``Literal[...]`` type, or a tuple of choices."""
        if isinstance(spec, ReplySchema):
            return spec
        if isinstance(spec, type) and issubclass(spec, BaseModel):
            return cls(name=spec.__name__, schema=spec.model_json_schema(), model=spec)
        if typing.get_origin(spec) is Literal:
            spec = tuple(str(v) for v in typing.get_args(spec))
        if isinstance(spec, tuple) and spec and all(isinstance(c, str) for c in spec):
            return cls.choice(*spec)
        raise TypeError(f"a reply schema is a pydantic model, a Literal or a tuple of choices, not {spec!r}")

    @classmethod
    def yes_no(cls) -> ReplySchema:
        """Yes/No, read as True/False like the paper's Yes/No readers."""
        return cls.choice("Yes", "No", values=(True, False))

    @classmethod
    def choice(cls, *choices: str, values: tuple[Any, ...] = ()) -> ReplySchema:
        schema = {
            "type": "object",
            "properties": {"answer": {"type": "string", "enum": list(choices)}},
            "required": ["answer"],
            "additionalProperties": False,
        }
        if values and len(values) != len(choices):
            raise ValueError("one value per choice")
        name = "choice_" + "_".join(re.sub(r"\W+", "", c.lower()) for c in choices)[:48]
        return cls(name=name, schema=schema, choices=tuple(choices), values=tuple(values))

    def describe(self) -> str:
        if self.choices:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        return f"a JSON object of schema {self.name}"

    def to_wire(self) -> str:
        return json.dumps({"name": self.name, "schema": self.schema}, separators=(",", ":"))

    def validate(self, text: str) -> Any:
        """The reply's value: the choice (as written in the schema) or the model instance."""
        body = _unfenced(unwrapped(text))  # a reasoning model's <think> block before its JSON is left out
        if self.choices:
            return self._choice(body)
        assert self.model is not None
        try:
            return self.model.model_validate_json(body)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(p) for p in first.get("loc", ())) or "reply"
            raise ParseError(f"does not fit {self.name}: {where}: {first['msg']}") from None

    def _choice(self, body: str) -> str:
        by_key = {c.lower(): c for c in self.choices}
        candidate: Any = body
        if body.startswith(("{", '"')):
            try:
                candidate = json.loads(body)
            except (json.JSONDecodeError, RecursionError):  # RecursionError: JSON nested thousands deep
                raise ParseError(f"not valid JSON; expected {self.describe()}") from None
            if isinstance(candidate, dict):
                candidate = candidate.get("answer")
        if isinstance(candidate, str):
            key = candidate.strip().strip(".!\"'").strip().lower()
            if key in by_key:
                choice = by_key[key]
                return self.values[self.choices.index(choice)] if self.values else choice
        raise ParseError(f"expected {self.describe()}")
