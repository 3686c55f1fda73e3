"""What a DCR verdict's statistics hold for its report (``DCR.Outcome``): Ẑ of the original and final candidates
(Eq. 3), every round's Ẑ, and why the loop stopped; the other statistics are kept as written."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from voirdire.kit import Statistics

Score = Literal["initial_score", "score"]  # the original candidate's Ẑ, or the final one's


class DCROutcome(Statistics):
    score: float | int | None = None
    initial_score: float | int | None = None
    scores: list[float | int | None] | None = None  # one per scored round, the original candidate's first
    stopped: str | None = "?"  # a Stop reason; "?" in a transcript that did not record it
    candidate: str = ""  # the candidate reported: the last scored one
    improved: bool = False
    unscored_candidate: str | None = None  # a last improvement the loop did not score
    sentences_start: int | None = None
    sentences_end: int | None = None
    lost_sentences: bool = False
    lost: list[dict[str, Any]] = Field(default_factory=list)  # unflagged sentences RAI lost: {round, sentence, how}
    removed: list[dict[str, Any]] = Field(default_factory=list)  # flagged sentences RAI deleted, in the candidate
    rewrote_consistent: list[dict[str, Any]] = Field(default_factory=list)  # {round, before, after}
    amc_complete: bool | None = None  # False: the final round's AMC array had another length (as-returned)
    history: list[dict[str, Any]] = Field(default_factory=list)  # each scored round (``Round``), in order

    def metric(self, score: Score) -> float | int | None:
        return self.initial_score if score == "initial_score" else self.score
