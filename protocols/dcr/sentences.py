"""Sentences of a candidate: how DCR's *divide* is read back, joined and compared between rounds.

The Divide-Conquer Evaluator itself partitions the candidate into sentences (§3.1: "DCE automatically partitions
the candidate paragraph into sentences"); the code here only reads what it returned: whether a reason is about one
sentence (App. A.4), the candidate rebuilt from improved sentences (Eq. 4, Algorithm 1's update step), and the
sentence diff of one round.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel

# A sentence ends at ., ! or ? (optionally closed by a quote or bracket) followed by white space. Texts of the
# benchmarks are tokenized ("the game ." / "' he said .") and the rule holds for both forms.
_BOUNDARY = re.compile(r"(?<=[.!?])(?:\s*['\"”’)\]])?\s+")
_WORD = re.compile(r"[^0-9a-z]+")


def split_sentences(text: str) -> list[str]:
    """``text`` cut at sentence boundaries (used to tell a one-sentence reason from a paragraph-level one, and by
    ROUGE-Lsum, which scores sentence by sentence)."""
    out: list[str] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        piece = text[start : m.end()].strip()
        if piece:
            out.append(piece)
        start = m.end()
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out


def normalize(text: str) -> str:
    """Lower case, letters and digits only: ``"jamaica 's"`` and ``"Jamaica's"`` read the same."""
    return _WORD.sub("", text.lower())


def is_sentence_level(sentence: str, candidate: str) -> bool:
    """App. A.4: is a DCE reason about one sentence of the candidate? Not when its ``sentence`` is empty, or when it
    spans several sentences of a candidate that has several (a paragraph-level reason, e.g. "The two paragraphs are
    not consistent." given for the whole candidate)."""
    if not normalize(sentence):
        return False
    return len(split_sentences(sentence)) < 2 or len(split_sentences(candidate)) < 2


def join_sentences(sentences: Sequence[str]) -> str:
    """The candidate ⟨ŝ_1, …, ŝ_k⟩ as one text (Algorithm 1: "Update the candidate")."""
    return " ".join(s.strip() for s in sentences if s.strip())


class SentenceChange(BaseModel):
    """One sentence rewritten by RAI: its position, the sentence before and after."""

    index: int
    before: str
    after: str


def sentence_diff(before: Sequence[str], after: Sequence[str]) -> list[SentenceChange]:
    """The sentences RAI changed in one round, position by position (Eq. 4 maps s_i to ŝ_i)."""
    return [
        SentenceChange(index=i, before=b, after=a)
        for i, (b, a) in enumerate(zip(before, after, strict=True))
        if a.strip() != b.strip()
    ]
