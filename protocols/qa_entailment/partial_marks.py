"""Partial marks (§4, App. D): scoring the inference gap between a system answer and a gold answer.

For an answer in A_inf − A_sup the evaluator asks for the inference process from the gold statement S1 to the
system statement S2 (Table 17 row 1); steps carrying information from outside S1/S2 end with [[INFO]], steps
that need an assumption with [[ASSUMPTION]]. App. D's hand-designed schemes (higher = closer to the gold):

    CIA: -#Step*10 - #INFO*3 - #ASSUMPTION*5      C: -#Step*10      IA: -#INFO*3 - #ASSUMPTION*5

"Inference + LLM Score" instead asks the model to rate the difficulty of that inference from 1 (very easy) to
5 (very hard) (Table 17 row 2); the mark is -difficulty. The "LLM Score" baseline skips the explanation and asks
for answer closeness from 1 (completely wrong) to 5 (completely right) (Table 17 row 3); the mark is the score
(or, to reproduce the authors' notebook, its negation: ``llm_score_mark(..., negated=True)``).

To rank all answers for AUROC (Tables 3, 13) the hierarchy comes first: answers in S − (A_sup ∪ A_inf) rank
below everything, answers in an unexplained cell above everything, and explained answers by their mark. This is
the tiering of the authors' released ``cot_vs_pr.ipynb``; when several gold statements entail the answer, each
gets an explanation and the best (highest) mark counts, as the notebook's minimum cost does.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel

from .hierarchy import HierarchyCell
from .parsing import ParseFailure

Scheme = Literal["CIA", "C", "IA", "inference_llm_score", "llm_score"]
EXPLANATION_SCHEMES: tuple[Scheme, ...] = ("CIA", "C", "IA")
SCHEMES: tuple[Scheme, ...] = ("CIA", "C", "IA", "inference_llm_score", "llm_score")
# App. D's weights.
STEP_WEIGHT, INFO_WEIGHT, ASSUMPTION_WEIGHT = 10, 3, 5
# Tiers for ranking answers outside the explained cells; far beyond any mark a 300-token explanation can earn.
TOP_TIER, BOTTOM_TIER = 1e6, -1e6

_INFO = re.compile(r"\[\[\s*info\s*\]\]", re.IGNORECASE)
_ASSUMPTION = re.compile(r"\[\[\s*assumption\s*\]\]", re.IGNORECASE)
# A numbered step: "1.", "1)", "Step 1:", "Step 1 -", with bullets or markdown emphasis around the number.
_STEP = re.compile(
    r"^[ \t]*(?:[-*•][ \t]+)?(?:\*\*|__)?[ \t]*(?:step[ \t]*)?(\d{1,3})[ \t]*(?:[.):]|[ \t]-[ \t])[ \t]*(?:\*\*|__)?"
    r"[ \t]*(.*)$",
    re.IGNORECASE,
)
# A marker that is mentioned, not appended: "No [[ASSUMPTION]] is needed", "without [[INFO]]".
_NEGATED_MARKER = re.compile(
    r"\b(?:no|without|zero)[ \t]+(?:(?:additional|extra|further|new|other)[ \t]+)?\[\[\s*(?:info|assumption)\s*\]\]"
    r"(?:[ \t]*(?:,|or|nor|and)[ \t]*\[\[\s*(?:info|assumption)\s*\]\])*",
    re.IGNORECASE,
)
# The prompt's own instructions, echoed: "If a step involves information not mentioned in S1 and S2, append
# [[INFO]] after the step." A marker named there is not appended to a step.
_INSTRUCTION = re.compile(r"\bappend\s+\[\[\s*(?:info|assumption)\s*\]\]", re.IGNORECASE)


def _markers(text: str, marker: re.Pattern[str]) -> bool:
    """Whether a step carries the marker (once is enough), not counting one that is only mentioned as absent or
    named in an echo of the prompt's instructions."""
    return bool(marker.search(_NEGATED_MARKER.sub(" ", _INSTRUCTION.sub(" ", text))))


class InferenceStep(BaseModel):
    number: int
    text: str
    info: bool
    assumption: bool


class InferenceExplanation(BaseModel):
    """A parsed Table 17 row 1 reply: its numbered steps and their markers."""

    steps: list[InferenceStep]
    # Unnumbered text before step 1 (the prompt asks for steps only; kept for the transcript).
    preamble: str = ""

    @property
    def n_steps(self) -> int:
        return len(self.steps)

    @property
    def n_info(self) -> int:
        return sum(s.info for s in self.steps)

    @property
    def n_assumption(self) -> int:
        return sum(s.assumption for s in self.steps)


def parse_explanation(reply: str) -> InferenceExplanation | ParseFailure:
    """Parse the numbered steps ("1.", "1)", "Step 1:", "**Step 1:**", "- 1."). Markers count once per step that
    carries them (the prompt appends one marker "after the step"); a marker mentioned as absent ("No
    [[ASSUMPTION]] is needed") is not counted, nor one named in an echo of the prompt's instructions ("..., append
    [[INFO]] after the step."). Unnumbered lines continue the previous step. Fails when there is
    no numbered step or the numbering is not 1, 2, ..., n, since #Step would then be a guess."""
    steps: list[tuple[int, list[str]]] = []
    preamble: list[str] = []
    for line in reply.splitlines():
        if not line.strip():
            continue
        match = _STEP.match(line)
        if match:
            steps.append((int(match.group(1)), [match.group(2).strip()]))
        elif steps:
            steps[-1][1].append(line.strip())
        else:
            preamble.append(line.strip())
    if not steps:
        return ParseFailure(parser="explanation", reason="no numbered steps", raw=reply)
    numbers = [n for n, _ in steps]
    if numbers != list(range(1, len(steps) + 1)):
        return ParseFailure(
            parser="explanation", reason=f"steps numbered {numbers}, expected 1..{len(steps)}", raw=reply
        )
    parsed = []
    for number, lines in steps:
        text = " ".join(lines)
        parsed.append(
            InferenceStep(number=number, text=text, info=_markers(text, _INFO), assumption=_markers(text, _ASSUMPTION))
        )
    return InferenceExplanation(steps=parsed, preamble=" ".join(preamble))


def cia(explanation: InferenceExplanation) -> float:
    return -(
        STEP_WEIGHT * explanation.n_steps
        + INFO_WEIGHT * explanation.n_info
        + ASSUMPTION_WEIGHT * explanation.n_assumption
    )


def c(explanation: InferenceExplanation) -> float:
    return -float(STEP_WEIGHT * explanation.n_steps)


def ia(explanation: InferenceExplanation) -> float:
    return -float(INFO_WEIGHT * explanation.n_info + ASSUMPTION_WEIGHT * explanation.n_assumption)


EXPLANATION_MARKS = {"CIA": cia, "C": c, "IA": ia}


def explanation_marks(explanation: InferenceExplanation) -> dict[str, float]:
    """CIA, C and IA marks of one explanation."""
    return {name: fn(explanation) for name, fn in EXPLANATION_MARKS.items()}


def inference_llm_score_mark(difficulty: int) -> float:
    """Inference + LLM Score: 1 (very easy) .. 5 (very hard) difficulty, so a harder inference scores lower."""
    if not 1 <= difficulty <= 5:
        raise ValueError(f"difficulty must be 1..5, got {difficulty}")
    return -float(difficulty)


def llm_score_mark(closeness: int, *, negated: bool = False) -> float:
    """LLM Score baseline: 1 (completely wrong) .. 5 (completely right), used as is (higher = closer).

    ``negated=True`` returns -closeness, as the released ``cot_vs_pr.ipynb``'s ``score_baseline`` does (the
    ranking behind Table 13's LLM Score AUROC of 0.8827); it ranks a "completely right" answer lowest among the
    explained ones, against the prompt's meaning, so it is a reproduction switch, not the default."""
    if not 1 <= closeness <= 5:
        raise ValueError(f"closeness must be 1..5, got {closeness}")
    return -float(closeness) if negated else float(closeness)


def best_mark(marks: Iterable[float | None]) -> float | None:
    """Best mark over the explanations of an answer; None when none could be computed."""
    known = [m for m in marks if m is not None]
    return max(known) if known else None


def ranking_score(
    cell: HierarchyCell | None,
    mark: float | None,
    *,
    explained_cells: Iterable[HierarchyCell] = (HierarchyCell.INF_ONLY,),
) -> float | None:
    """One number per answer for AUROC: hierarchy tier first, mark within the explained cells.

    None when the cell is unknown, or the answer is in an explained cell but has no mark (parse failures); such
    answers are left out of the AUROC and counted separately, never given a made-up mark."""
    if cell is None:
        return None
    if cell is HierarchyCell.NEITHER:
        return BOTTOM_TIER
    if cell not in set(explained_cells):
        return TOP_TIER
    return mark
