"""A reply that reproduces its prompt's own text -- the answer template, the worked example -- instead of answering.

A model that copies the prompt's template back (``{"reason": {"sentence": "original sentence", ...}``) or returns
the prompt's example answer gives a reply that parses, and would be scored as if the model had said it. Every
reader is fed the prompt's fixed text (the prompt file rendered without its variables: what the model was shown
as instructions and examples, not the inputs it is asked about); a reply is an echo when most of it is that text
and it holds a long stretch copied word for word. Short phrases the prompt asks the reply to use ("This summary is
consistent with the article", "Please answer with Yes or No") are far below the stretch, so a reply built around
them is read as usual. Inputs the reply must repeat (a candidate's sentences) are variables, never fixed text.

Linear in the reply's length: the fixed text's character shingles go in a set once per prompt, and the reply is
walked once.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

_K = 24  # shingle length, in characters of whitespace-normalised lower-case text
_LONGEST = 80  # a stretch copied word for word at least this long ...
_SHARE = 0.5  # ... in a reply of which at least this share is copied: an echo


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


@lru_cache(maxsize=256)
def _shingles(fixed: tuple[str, ...]) -> frozenset[str]:
    out: set[str] = set()
    for segment in fixed:
        t = _norm(segment)
        out.update(t[i : i + _K] for i in range(len(t) - _K + 1))
    return frozenset(out)


def echoed(reply: str, fixed: Sequence[str]) -> str | None:
    """Why ``reply`` is an echo of the prompt's fixed text ``fixed`` (its template and examples), or None."""
    shingles = _shingles(tuple(fixed))
    text = _norm(reply)
    if not shingles or len(text) < _LONGEST:
        return None
    covered = reach = longest = 0
    run_start = -1
    for i in range(len(text) - _K + 1):
        if text[i : i + _K] not in shingles:
            run_start = -1
            continue
        if run_start < 0:
            run_start = i
        longest = max(longest, i + _K - run_start)
        covered += i + _K - max(i, reach)
        reach = i + _K
    if longest >= _LONGEST and covered >= _SHARE * len(text):
        return (
            f"the reply reproduces the prompt's own template or example ({covered} of its {len(text)} characters "
            "copied from the prompt's fixed text), not an answer"
        )
    return None
