"""Divide-Conquer Evaluator (DCE, §3.1, Eq. 1): each sentence of the candidate against the entire reference.

{γ_1, …, γ_k} = L_DCE(⟨s_1, …, s_k⟩, R): the evaluator divides the candidate into sentences and gives, for each, a
reason why it is or is not consistent with the whole reference, and a decision for the candidate (``is_consistent``).
The prompts are Table 7 (semantic consistency: a true answer and an attempt answer), Table 8 (summarization
consistency: an article and a summary) and, for the paragraph-level comparison of §4.5, Table 11 (one reason for the
whole summary). Replies are read through the schemas below; a reply that does not fit is a parse failure.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Task = Literal["semantic", "summarization"]
Level = Literal["sentence", "paragraph"]

# Bounds that keep a constrained reply within a reply budget, above every benchmark sentence (the longest, split as
# sentences.py splits, has 470 characters in SummEval, 373 in QAGS-CNN; at most 7 sentences a summary) and the
# reasons of Tables 13-17.
SENTENCE_CHARS = 600
REASON_CHARS = 400
MAX_SENTENCES = 16

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

    reason: list[SentenceReason] = Field(min_length=1, max_length=MAX_SENTENCES)
    is_consistent: bool

    def reasons(self) -> list[SentenceReason]:
        return list(self.reason)


class ParagraphDCEReply(BaseModel):
    """Table 11: ``{"reason": {"sentence", "reason"}, "is_consistent": true/false}``, one reason for the summary."""

    reason: SentenceReason
    is_consistent: bool

    def reasons(self) -> list[SentenceReason]:
        return [self.reason]


def reply_schema(level: Level) -> type[DCEReply] | type[ParagraphDCEReply]:
    return DCEReply if level == "sentence" else ParagraphDCEReply
