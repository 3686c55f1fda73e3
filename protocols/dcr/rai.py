"""Reason-Assisted Improver (RAI, §3.3, Eq. 4): the improver rewrites the sentences DCE found inconsistent.

⟨ŝ_1, …, ŝ_k⟩ = L_RAI({γ_1, …, γ_k}, ⟨s_1, …, s_k⟩, R): a sentence that is inconsistent is rewritten (ŝ_i ≠ s_i),
any other is retained. Sentence level uses Table 10 (a list of {sentence, reason} objects in, a list of {sentence,
improved_sentence, reason} out); paragraph level Table 12 (the summary and its one reason in, ``improved_summary``
out). ``align`` holds the improver to Eq. 4's k sentences in, k sentences out.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pydantic import BaseModel, Field, RootModel, create_model

from .dce import REASON_CHARS, SENTENCE_CHARS
from .sentences import normalize

SUMMARY_CHARS = 2000


class ImprovedSentence(BaseModel):
    """Table 10: one sentence, its improved form and how it was improved (or 'ALREADY CONSISTENT')."""

    sentence: str = Field(max_length=SENTENCE_CHARS, description="original sentence")
    improved_sentence: str = Field(min_length=1, max_length=SENTENCE_CHARS, description="improved sentence")
    reason: str = Field(max_length=REASON_CHARS, description="how it is improved, or 'ALREADY CONSISTENT'")


class ImprovedSentences(RootModel[list[ImprovedSentence]]):
    """Table 10's reply: a JSON array with one object per given sentence."""


def rai_schema(k: int) -> type[ImprovedSentences]:
    """At most ``k`` improved sentences (one per sentence given); fewer are read by ``align``."""
    return create_model(  # type: ignore[call-overload, no-any-return]
        f"ImprovedSentences{k}",
        __base__=ImprovedSentences,
        root=(list[ImprovedSentence], Field(min_length=1, max_length=k)),
    )


class ImprovedSummary(BaseModel):
    """Table 12's reply: the original summary, the improved summary, how it was improved."""

    sentence: str = Field(max_length=SUMMARY_CHARS, description="original summary")
    improved_summary: str = Field(min_length=1, max_length=SUMMARY_CHARS, description="improved summary")
    reason: str = Field(max_length=REASON_CHARS, description="how it is improved, or 'ALREADY CONSISTENT'")


def as_objects(pairs: Sequence[tuple[str, str]]) -> str:
    """Table 10's ``{sentences}``: "a list of objects, each have two fields: sentence and reason", as JSON, from
    (sentence, reason) pairs."""
    return json.dumps([{"sentence": s, "reason": r} for s, r in pairs], ensure_ascii=False, indent=1)


class Alignment(BaseModel):
    """The improved sentences put back in the order of the originals."""

    sentences: list[str]
    missing: list[int] = Field(default_factory=list, description="originals with no entry: retained unchanged")
    unmatched: list[int] = Field(default_factory=list, description="entries matching no original: dropped")

    @property
    def complete(self) -> bool:
        return not self.missing and not self.unmatched


def align(originals: Sequence[str], entries: Sequence[ImprovedSentence]) -> Alignment:
    """Eq. 4 maps s_i to ŝ_i. With one entry per sentence they pair by position. Otherwise each entry is paired
    with the first unpaired original its ``sentence`` field repeats (letters and digits compared), an original with
    no entry is retained (the "otherwise retain s_i" of §3.3), and an entry that repeats no original is dropped."""
    if len(entries) == len(originals):
        return Alignment(sentences=[e.improved_sentence.strip() for e in entries])
    improved: list[str | None] = [None] * len(originals)
    unmatched: list[int] = []
    keys = [normalize(s) for s in originals]
    for j, entry in enumerate(entries):
        key = normalize(entry.sentence)
        i = next((i for i, k in enumerate(keys) if improved[i] is None and key and k == key), None)
        if i is None:
            unmatched.append(j)
        else:
            improved[i] = entry.improved_sentence.strip()
    missing = [i for i, s in enumerate(improved) if s is None]
    return Alignment(
        sentences=[s if s is not None else originals[i] for i, s in enumerate(improved)],
        missing=missing,
        unmatched=unmatched,
    )
