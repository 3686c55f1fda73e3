"""Divide-Conquer Evaluator (DCE, §3.1, Eq. 1): each sentence of the candidate against the entire reference.

{γ_1, …, γ_k} = L_DCE(⟨s_1, …, s_k⟩, R): the evaluator divides the candidate into sentences and gives, for each, a
reason why it is or is not consistent with the whole reference, and a decision for the candidate (``is_consistent``).
The prompts are Table 7 (semantic consistency: a true answer and an attempt answer), Table 8 (summarization
consistency: an article and a summary) and, for the paragraph-level comparison of §4.5, Table 11 (one reason for the
whole summary). Replies are read through the schemas below; a reply that does not fit is a parse failure.
"""

from __future__ import annotations

from functools import cache
from typing import Literal

from pydantic import BaseModel, Field, create_model

Task = Literal["semantic", "summarization"]
Level = Literal["sentence", "paragraph"]

# Bounds that keep a constrained reply within a reply budget, above every benchmark sentence (the longest, split as
# sentences.py splits, has 470 characters in SummEval, 373 in QAGS-CNN) and the reasons of Tables 13-17. The number
# of reasons is sized to the candidate (``reply_schema``): no fixed cap.
SENTENCE_CHARS = 600
REASON_CHARS = 400


def max_reasons(sentences: int) -> int:
    """The most reasons a DCE reply may hold for a candidate of ``sentences`` sentences: twice as many and two more,
    room for an evaluator that divides the candidate more finely than the segmenter does."""
    return 2 * max(sentences, 1) + 2

# The prompt of each (level, task): Table 7, Table 8; Table 11 is the paper's only paragraph-level evaluator.
PROMPTS: dict[tuple[Level, Task], str] = {
    ("sentence", "semantic"): "dce_semantic",
    ("sentence", "summarization"): "dce_summarization",
    ("paragraph", "summarization"): "dce_paragraph",
}


class SentenceReason(BaseModel):
    """γ_i: one sentence of the candidate and why it is or is not consistent with the reference."""

    sentence: str = Field(max_length=SENTENCE_CHARS, description="the original sentence")
    reason: str = Field(min_length=1, max_length=REASON_CHARS, description="why it is or is not consistent")


class DCEReply(BaseModel):
    """Tables 7 and 8: ``{"reason": [{"sentence", "reason"}], "is_consistent": true/false}``."""

    reason: list[SentenceReason] = Field(min_length=1)
    is_consistent: bool

    def reasons(self) -> list[SentenceReason]:
        return list(self.reason)


class ParagraphDCEReply(BaseModel):
    """Table 11: ``{"reason": {"sentence", "reason"}, "is_consistent": true/false}``, one reason for the summary."""

    reason: SentenceReason
    is_consistent: bool

    def reasons(self) -> list[SentenceReason]:
        return [self.reason]


@cache
def reply_schema(level: Level, sentences: int = 1) -> type[DCEReply] | type[ParagraphDCEReply]:
    """The DCE reply schema; at sentence level, for a candidate of ``sentences`` sentences (``max_reasons``)."""
    if level == "paragraph":
        return ParagraphDCEReply
    return create_model(
        f"DCEReply{sentences}",
        __base__=DCEReply,
        reason=(list[SentenceReason], Field(min_length=1, max_length=max_reasons(sentences))),
    )
