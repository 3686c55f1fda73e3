"""Lexical match: the evaluator behind the paper's Table 1 "Lexical Match" rows (scores from Wang et al. 2023).

The rule is SQuAD-style normalisation of both strings (lower-case, drop ASCII punctuation, drop the articles
a/an/the, squeeze whitespace) followed by containment: the system answer is judged correct iff some normalised
gold answer is a substring of the normalised system answer. Because Python's ``"" in s`` is always true, a gold
piece that normalises to "" (EVOUNA has a few, e.g. "A+" -> "a" -> "", or "*") matches every answer; Wang et
al.'s evaluator behaves this way and Table 1 is only reproduced with it (see docs/qa_entailment.md), so it is
the default. ``skip_empty_gold=True`` ignores such pieces instead.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable

_PUNCTUATION = frozenset(string.punctuation)  # ASCII only: curly quotes and dashes survive, as in SQuAD
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """SQuAD v1.1 answer normalisation, in its order: lower, remove punctuation, remove articles, fix spaces."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def matching_gold(answer: str, gold_answers: Iterable[str], *, skip_empty_gold: bool = False) -> str | None:
    """The first gold answer whose normalised form occurs in the normalised system answer, else None."""
    normalized_answer = normalize_answer(answer)
    for gold in gold_answers:
        normalized_gold = normalize_answer(gold)
        if skip_empty_gold and not normalized_gold:
            continue
        if normalized_gold in normalized_answer:
            return gold
    return None


def lexical_match(answer: str, gold_answers: Iterable[str], *, skip_empty_gold: bool = False) -> bool:
    """Judged correct iff some gold answer is contained in the system answer after normalisation."""
    return matching_gold(answer, gold_answers, skip_empty_gold=skip_empty_gold) is not None


def exact_match(answer: str, gold_answers: Iterable[str]) -> bool:
    """SQuAD exact match: the normalised system answer equals some normalised gold answer."""
    normalized_answer = normalize_answer(answer)
    return any(normalize_answer(gold) == normalized_answer for gold in gold_answers)
