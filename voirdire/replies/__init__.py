"""The one reader of closed answers: yes/no, a verdict of a polar pair, a choice among labels, a bounded number.

Every protocol's closed answers go through these four functions; a protocol brings only its words (a ``Polar``,
``Labels``, a scale). Each answers or raises ``ParseError`` (a refusal: the caller records an inconclusive answer),
in time linear in the reply's length. A refusal is always better than a flip: every unclear reply is refused.

Before any reader looks at the words, a reply is checked for two things the readers share:

- its language: a reply written in another language than English is refused, never guessed from a word that looks
  like an answer ("Ce n'est pas une contradiction."; ``language.py``);
- its shape: a JSON object with an answer key (``{"answer": "no", "explanation": ...}``), fenced or not, or a bare
  quoted value (``"Incorrect"``), gives that key's value, read by the same reader; text around the object must not
  say otherwise, and two objects must agree; a yes/no value under another key is read as that key's words asked
  and answered (``{"is_correct": false}``: "is correct? No."; ``shape.py``);
- the conclusion it ends on: reasoning blocks left out, the last answer tag, the text after the last final marker
  or self-correction ("Final answer:", "Verdict:", "Wait, ...", "On second thought, ..."); a reply cut off before
  its conclusion is refused (``conclusion.py``).

A reply that reproduces its prompt's own template or example is refused before any of this, by the Session
(``echo.py``).

The words are then read through one front end (``lexicon.py``): tokens, sentences, clauses, conclusions, negations,
hedges, answer words and restated questions are the same for every reader.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from typing import TypeVar

from voirdire.replies.schema import ParseError, ReplySchema

from . import labels as _labels, number as _number, polar as _polar, yes_no as _yes_no
from .conclusion import read_conclusion
from .echo import echoed
from .labels import Labels
from .language import foreign
from .polar import Polar
from .shape import shaped

__all__ = [
    "Labels",
    "ParseError",
    "Polar",
    "ReplySchema",
    "echoed",
    "read_conclusion",
    "read_label",
    "read_number",
    "read_polar",
    "read_yes_no",
]

T = TypeVar("T")


def _front(text: str, read: Callable[[str], T], keyed: Callable[[str], T] | None = None) -> T:
    """Language, then the conclusion the reply ends on, its shape, then ``read`` (see the module's docstring)."""
    if foreign(text):
        raise ParseError("the reply is not in English; it is not read")
    return read_conclusion(text, lambda part: _shaped(part, read, keyed))


def _shaped(text: str, read: Callable[[str], T], keyed: Callable[[str], T] | None) -> T:
    data = shaped(text)
    if data.several:
        raise ParseError("the reply's answer key holds a list or an object, not one answer")
    values = {read(answer) for answer in data.answers} | _keyed(data.keyed, keyed or read)
    if not values:
        if data.keyed:
            raise ParseError("the reply's keys say nothing this reader reads")
        return read(data.rest)
    if len(values) > 1:
        raise ParseError(f"the reply's answers disagree: {sorted(map(str, values))}")
    (value,) = values
    if data.rest.strip():
        try:
            around = read(data.rest)
        except ParseError:
            return value  # the text around the answer says nothing readable
        if around != value:
            raise ParseError(f"the answer key says {value}, the text around it {around}")
    return value


def _keyed(answers: tuple[str, ...], read: Callable[[str], T]) -> set[T]:
    """The readings of yes/no values under keys ("is correct? No."); a key that names nothing the reader reads
    ("has_sources") says nothing."""
    out = set()
    for answer in answers:
        with contextlib.suppress(ParseError):
            out.add(read(answer))
    return out


def read_yes_no(text: str, content: Polar | None = None) -> str:
    """ "yes" or "no" (``yes_no.py``); ``content`` reads what the reply says of its subject when no answer word does
    ("They are not paraphrases." is "no")."""
    return _front(text, lambda t: _yes_no.read_yes_no(t, content), _content_first(content))


def _content_first(content: Polar | None) -> Callable[[str], str] | None:
    """A key read for what it says of the subject first: ``{"different": true}`` is No, ``{"sure": true}`` Yes."""
    if content is None:
        return None

    def read(answer: str) -> str:
        try:
            return "yes" if _polar.read_polar(answer, content) == content.names[0] else "no"
        except ParseError:
            return _yes_no.read_yes_no(answer)

    return read


def read_polar(text: str, polar: Polar) -> str:
    """The verdict of a polar pair said of a subject ("correct" / "incorrect" about "the claim"; ``polar.py``)."""
    return _front(text, lambda t: _polar.read_polar(t, polar))


def read_label(text: str, labels: Labels) -> str:
    """One label of a choice ("entailment" / "neutral" / "contradiction"; ``labels.py``)."""
    return _front(text, lambda t: _labels.read_label(t, labels))


def read_number(
    text: str, low: int, high: int, scale: Mapping[int, str] | None = None, others: tuple[Mapping[int, str], ...] = ()
) -> int:
    """The one integer in [low, high] the reply gives, with the prompt's ``scale`` labels if any; a number followed
    by a label of one of the ``others`` scales (a sibling prompt's) is refused (``number.py``)."""
    return _front(text, lambda t: _number.read_number(t, low, high, scale, others))
