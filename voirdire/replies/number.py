"""A bounded number: the one integer in [low, high] a reply gives ("4", "Score: 4", "I would rate it a 2.").

With the prompt's ``scale`` (number → label, as the prompt prints it) the number may be followed by its own label
("1: Very easy", "5 (completely right)"); an echo of the whole scale is skipped. A label that is not the number's,
a hedge ("3 or 4", "3-4", "maybe 4"), a number out of range, no number, and two different numbers are refused with
``ParseError``. Linear in the reply's length: one tokenising expression per line, bounded look-backs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache

from voirdire.replies.schema import ParseError

from .lexicon import MAYBE, NEGATORS, words

# Wrappers a chat model puts around a one-word answer: markdown emphasis/code, quotes, trailing punctuation.
_WRAPPERS = "*_`\"'“”‘’ \t"


def _clean_line(line: str) -> str:
    line = line.strip().strip(_WRAPPERS)
    line = line.rstrip(".!:;, \t").strip(_WRAPPERS)
    return line


@cache
def _subject(scale: tuple[str, ...]) -> re.Pattern[str] | None:
    """The subject every label of a scale shares ("The AI-generated answer is ..."), which a reply echoing a scale
    line may keep, shorten ("The answer is ...") or drop; matched on its last two words."""
    split = [label.lower().split() for label in scale]
    common: list[str] = []
    for column in zip(*split, strict=False):
        if len(set(column)) != 1:
            break
        common.append(column[0])
    if len(common) < 2:
        return None
    tail = r"\s+".join(re.escape(w) for w in common[-2:])
    return re.compile(rf"^(?:[\w-]+\s+){{0,3}}?{tail}\s+", re.IGNORECASE)


_SCORE_LINE = re.compile(
    r"^(?:(?:final\s+)?(?:score|rating|difficulty|closeness|answer|label)\s*[:=\-]?\s*)?(\d+)(?:\s*(?:/|out\s+of)\s*5)?"
    r"(?:\s*[:(\-–—]\s*(?P<label>.*))?$",
    re.IGNORECASE,
)
# An assertive tail that adds nothing to a score line: "2 - Easy, I think".
_ASSERTIVE_TAIL = re.compile(r"[,;]?\s*(?:i\s+think|i\s+believe|i\s+would\s+say|i'd\s+say)\W*$", re.IGNORECASE)
_SCORE_TOKEN = re.compile(r"\d+(?:[.,]\d+)?|[a-z0-9]+(?:['\-][a-z0-9]+)*|[^\sa-z0-9]")
# What may follow a number that is a score ("a 3.", "2 (Easy)", "4 out of 5", "4/5"); "3 steps" is no score.
_SCORE_NEXT = frozenset({"", ".", ",", ":", ";", "(", ")", "-", "–", "—", "/", "out", "!", "*"})
_RANGE_WORDS = frozenset({"to", "-", "–", "—", "and", "or", "/"})
_SCORE_HEDGES = MAYBE | words("around about approximately roughly between or either")
_STEP_WORDS = frozenset({"step", "steps", "line", "row", "point", "number", "item", "s", "#"})


def _number(digits: str) -> int:
    """The value of a run of digits; a long run is just "too large" (int() refuses over 4,300 digits)."""
    return int(digits) if len(digits) <= 9 else 10**9


def _label_key(text: str, scale: Mapping[int, str] | None = None) -> str:
    text = text.strip().strip(_WRAPPERS).rstrip(").!:;, \t").strip(_WRAPPERS)
    text = " ".join(text.lower().replace("–", "-").split())
    subject = _subject(tuple(scale.values())) if scale else None
    return subject.sub("", text) if subject is not None else text


def _scale_labels(scale: Mapping[int, str] | None) -> frozenset[str]:
    """The scale's labels and the labels of the scales beside it (``others``), as keys: a score line with any of
    them after the number is labelled, and must carry its own number's label."""
    if not scale:
        return frozenset()
    return frozenset(_label_key(t, scale) for t in scale.values()) | {_label_key(t) for t in scale.values()}


def _read_score(
    line: str, low: int, high: int, scale: Mapping[int, str] | None, known: frozenset[str]
) -> int | str | None:
    """The score on a score-shaped line ("4", "Score: 4", "2 - Easy"), why such a line is not one, or None when
    the line is not shaped as a score."""
    line = _ASSERTIVE_TAIL.sub("", line)
    match = _SCORE_LINE.match(_clean_line(line.replace("*", "").replace("`", "")))
    if match is None:
        return None
    value = _number(match.group(1))
    if not low <= value <= high:
        return f"{match.group(1)[:12]} is outside {low}..{high}"
    label = _label_key(match.group("label") or "", scale)
    if label:
        if scale is None or value not in scale:
            return f"{value} is followed by {label!r}, but no label is expected"
        if label != _label_key(scale[value], scale):
            if label in known:
                return f"{value} is followed by {label!r}, but the scale says {scale[value]!r}"
            return None  # more than a label ("4 (Hard) - it needs two assumptions"): read as a sentence
    return value


_SCALE_LINE = re.compile(r"^[\s*_`]*(\d+)[\s*_`]*[.):\-–—][\s*_`]*(.+)$")


def _echoes_scale(line: str, scale: Mapping[int, str] | None) -> bool:
    """Whether a line is one of the scale's own lines ("2: Easy", "2. Easy"), as a model echoing the prompt
    writes it."""
    match = _SCALE_LINE.match(line) if scale is not None else None
    if match is None:
        return False
    value = _number(match.group(1))
    return value in scale and _label_key(match.group(2), scale) == _label_key(scale[value], scale)  # type: ignore[operator,index]


def _scale_shaped(line: str) -> bool:
    """A numbered line with text after it ("3: The AI-generated answer is neither correct nor right."): in a
    reply that echoes the scale, a copied line the model changed, not its score."""
    return _SCALE_LINE.match(line) is not None


def _prose_scores(
    line: str, low: int, high: int, scale: Mapping[int, str] | None, known: frozenset[str]
) -> list[int] | str:
    """Scores given in a sentence ("I would rate it a 2.", "The difficulty is 2 (Easy)."), or why the line is
    unreadable (a hedge: "3 or 4", "maybe 4"; a range other than the scale's own "1 to 5")."""
    tokens = _SCORE_TOKEN.findall(line.lower())
    found: list[int] = []
    for k, tok in enumerate(tokens):
        if not tok.isdigit():
            continue
        value = _number(tok)
        prev, nxt = (tokens[k - 1] if k else ""), (tokens[k + 1] if k + 1 < len(tokens) else "")
        if k == 0 and nxt in (".", ")") and k + 2 < len(tokens):
            continue  # a numbered list item ("1. The premise ...")
        if prev in _STEP_WORDS or not low <= value <= high:
            continue  # "step 2", "S2", a year
        after = tokens[k + 2] if k + 2 < len(tokens) else ""
        if prev == "/" or (prev == "of" and k >= 2 and (tokens[k - 2] == "out" or tokens[k - 2].isdigit())):
            continue  # the "/5", "out of 5" or "of 5" after a score
        if prev in ("-", "−") and k == 1:
            return f"a negative number: -{tok}"
        if nxt in ("/", "of") and after == str(high):
            found.append(value)  # "4/5", "4 of 5"
            continue
        if nxt in _RANGE_WORDS and after.isdigit():
            if (value, _number(after)) == (low, high) or prev in ("from", "of"):
                continue  # the scale itself: "from 1 to 5", "a scale of 1-5"
            return f"a range or a choice of scores: {tok} {nxt} {after}"
        if prev in _RANGE_WORDS and k >= 2 and tokens[k - 2].isdigit():
            if (_number(tokens[k - 2]), value) == (low, high):
                continue  # the second end of the scale's own range
            return f"a range or a choice of scores: {tokens[k - 2]} {prev} {tok}"
        if nxt not in _SCORE_NEXT:
            continue  # "3 steps", "1 assumption"
        window = tokens[max(0, k - 3) : k]
        if any(w in _SCORE_HEDGES for w in window):
            return f"a hedged score: {' '.join(window)} {tok}"
        scope = []
        for w in reversed(tokens[max(0, k - 6) : k]):
            if w in (",", ";", ".", ":", "!"):
                break
            scope.append(w)
        if any(w in NEGATORS or w == "cannot" or w.endswith("n't") for w in scope):
            continue  # "not 5", "not a 5", "I would not give it a 5"
        if nxt in (":", "(", "-", "–", "—") and scale is not None:
            label = []
            for w in tokens[k + 2 : k + 14]:
                if w in (")", ".", ";", ",", "!"):
                    break
                label.append(w)
            words = _label_key(" ".join(label), scale)
            restated = words != " ".join(label)  # the scale's subject repeated, with another predicate
            if (words in known or restated) and words != _label_key(scale[value], scale):
                return f"{value} is followed by {words!r}, but the scale says {scale[value]!r}"
        found.append(value)
    return found


def read_number(
    reply: str, low: int, high: int, scale: Mapping[int, str] | None = None, others: tuple[Mapping[int, str], ...] = ()
) -> int:
    """The one integer in [low, high] a reply gives ("Return a number from 1 to 5 only").

    "4", "4.", "Score: 4", "**2**" and "4/5" parse. With the prompt's ``scale`` (number → label) the number may be
    followed by ":", "(", "-" or "–" and that number's own label, as a model
    echoing the prompt writes it: "1: Very easy", "5 (completely right)", "Rating: 2 - Easy"; an echo of the whole
    scale is skipped ("1: Very easy\\n...\\n5: Very hard\\n\\n2" is 2). A score may be given in a sentence: "I would
    rate it a 2.", "On a scale from 1 to 5, I'd rate it 2." ("3 steps", "step 2", "1 to 5" are no scores). A label
    that is not the number's ("4: Very easy"), a hedge ("3 or 4", "3-4", "maybe 4", "around 3"), a number out of
    range, no number ("four", "Easy"), and two different scores ("3\\n4", "Score: 2. Actually, 3.") fail. A
    separator with nothing after it ("4 -") is the bare number.
    """
    known = _scale_labels(scale).union(*(_scale_labels(o) for o in others))
    lines = [ln for ln in reply.splitlines() if ln.strip()]
    if not lines:
        raise ParseError("empty reply")
    echoes = [ln for ln in lines if _echoes_scale(ln, scale)]
    if len(echoes) >= 3:  # the scale, copied from the prompt (some lines perhaps changed): not the score
        lines = [ln for ln in lines if not _scale_shaped(ln)]
        if not lines:
            raise ParseError("reply only repeats the scale")
    found: list[int] = []
    for line in lines:
        value = _read_score(line, low, high, scale, known)
        if isinstance(value, str):
            raise ParseError(value)
        if isinstance(value, int):
            found.append(value)
            continue
        if _echoes_scale(line, scale):  # "2. Easy": its own scale line
            found.append(_number(_SCALE_LINE.match(line).group(1)))  # type: ignore[union-attr]
            continue
        prose = _prose_scores(line, low, high, scale, known)
        if isinstance(prose, str):
            raise ParseError(prose)
        found.extend(prose)
    values = sorted(set(found))
    if not values:
        raise ParseError(f"no single number from {low} to {high}")
    if len(values) > 1:
        raise ParseError(f"reply gives several scores: {values}")
    return values[0]
