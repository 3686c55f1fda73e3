"""What a cross-examination verdict's statistics hold (``Protocol.Outcome`` of LMvLM and its §4.1 baselines): the
claim judged and, for LMvLM, each examination's counts for Table 8."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from voirdire.kit import Guarantee, Statistics


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
    examinations_planned: int | None = None  # adaptive Majority: the N it could have run (it ran len(examinations))


def majority_margin(decisions: Sequence[str], planned: int | None = None) -> Guarantee | None:
    """LMvLM (Majority)'s own guarantee (§4.1): how many of its examinations concluded the claim is false, against
    how many found it correct (3–0 or 2–1 of three), and each examination's decision. An inconclusive decision
    counts as a rejection (§2 Stage 3), as in the vote. None for a single examination (LMvLM): no vote to count.

    ``planned``: the examinations the procedure has (``--examinations N``); an adaptive run that stopped once the
    majority was decided ran fewer, and says so ("2–0 of 3, third not needed"): the rest could not change it."""
    planned = planned or len(decisions)
    if planned < 2:
        return None
    reject = sum(d != "correct" for d in decisions)
    accept = len(decisions) - reject
    rejected = reject > planned / 2
    won, lost = (reject, accept) if rejected else (accept, reject)
    margin = f"{won}–{lost}"
    unanimous = "unanimous" if lost == 0 else "split"
    side = "false (rejected)" if rejected else "correct (accepted)"
    inconclusive = sum(d == "inconclusive" for d in decisions)
    counted = f"; {inconclusive} inconclusive, counted as false (§2 Stage 3)" if inconclusive else ""
    skipped = planned - len(decisions)
    if skipped:
        rest = _ORDINALS.get(len(decisions) + 1, f"examination {len(decisions) + 1}") if skipped == 1 else (
            f"the other {skipped}"
        )
        of = f"{margin} majority of {planned} examinations, {rest} not needed (adaptive)"
    else:
        of = f"{margin} majority of {planned} examinations ({unanimous})"
    return Guarantee(
        kind="vote_margin",
        statement=f"{of}: the claim is {side}; decisions {', '.join(decisions)}{counted}",
        values={
            "margin": margin,
            "reject_votes": reject,
            "accept_votes": accept,
            "examinations": len(decisions),
            **({"examinations_planned": planned, "not_needed": skipped} if skipped else {}),
            "unanimous": lost == 0,
            "decisions": list(decisions),
        },
        source="§4.1 LMvLM (Majority): reject when at least two of three examinations conclude the claim is false",
    )


_ORDINALS = {2: "second", 3: "third", 4: "fourth", 5: "fifth", 6: "sixth", 7: "seventh", 8: "eighth", 9: "ninth"}
