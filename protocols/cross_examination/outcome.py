"""What a cross-examination verdict's statistics hold (``Protocol.Outcome`` of LMvLM and its §4.1 baselines): the
claim judged and, for LMvLM, each examination's counts for Table 8."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from voirdire.kit import Statistics


class ExaminationCounts(BaseModel):
    """One examination as its verdict records it (``Examination`` and its question count)."""

    model_config = ConfigDict(extra="allow")
    decision: str
    n_questions: int
    questions_per_iteration: list[int]
    followup_iterations: int


class ClaimOutcome(Statistics):
    """The claim judged (None in transcripts written before it was recorded: the item's claim then), and the
    examinations that judged it (none for the baselines)."""

    claim: str | None = None
    claim_generated: bool = False
    examinations: list[ExaminationCounts] = Field(default_factory=list)
