"""The model-free graders the paper compares with: Table 1 "Lexical Match" (Wang et al. 2023) and token F1 (§2,
the "F1 Score" of Tables 3/13, judged correct at a threshold).

Each is a one-step protocol with no roles: one ``match`` state, one step and one verdict per answer, so a
baseline run leaves the same kind of transcript as the entailment grader, resumes the same way and is scored by
the same report.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from voirdire.kit import Protocol, Session, StateMachine, Verdict

from . import plugin
from .data import QAItem
from .graded import QAOutcome, agrees, decision_word
from .lexical import matching_gold, normalize_answer
from .protocol import DISPLAY
from .token_f1 import DEFAULT_F1_THRESHOLD, token_f1

MACHINE = StateMachine.chain("match")


class LexicalMatchParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # Wang et al.'s rule lets a gold piece that normalises to "" match everything; Table 1 needs it (lexical.py).
    skip_empty_gold: bool = Field(
        False,
        description="ignore gold pieces that normalise to '' (which otherwise match everything, as in Table 1)",
    )


class TokenF1Params(BaseModel):
    model_config = ConfigDict(extra="forbid")
    threshold: float = Field(
        DEFAULT_F1_THRESHOLD, ge=0.0, le=1.0, description="judged correct at this token F1 (the paper gives none)"
    )


class _Baseline(Protocol[QAItem, Any]):
    evaluator: ClassVar[str]
    paper = plugin.PAPER
    roles: ClassVar[tuple[str, ...]] = ()
    machine = MACHINE
    display = DISPLAY.model_copy(update={"colors": {}, "quiet_states": ("match",)})
    Item = QAItem
    Outcome = QAOutcome
    # No prompts: the folder does not exist, so nothing is loaded and the header lists no prompt.
    prompt_folder = "qa_baselines"

    def _verdict(self, session: Session, item: QAItem, judgment: bool, evidence: list[str], **extra: Any) -> Verdict:
        return session.verdict(
            decision_word(judgment),
            accepted=judgment,
            evidence=evidence,
            statistics={
                "evaluator": self.evaluator,
                "system": item.system,
                "human_judgment": item.human_judgment,
                "judgment": judgment,
                "agrees_with_human": agrees(judgment, item.human_judgment),
                **extra,
            },
        )


class LexicalMatchGrading(_Baseline):
    """Table 1 "Lexical Match" (Wang et al. 2023): some normalised gold answer occurs in the normalised answer."""

    name = plugin.qa_lexical.name
    evaluator = "lexical"
    Params = LexicalMatchParams

    async def run(self, item: QAItem, session: Session) -> Verdict:
        session.enter("match")
        gold = matching_gold(item.system_answer, item.gold_answers, skip_empty_gold=self.params.skip_empty_gold)
        normalized = normalize_answer(item.system_answer)
        session.note("lexical_match", normalized_answer=normalized, matched_gold=gold, judgment=gold is not None)
        evidence = [
            f"gold answer {gold!r} occurs in the normalised answer" if gold is not None else "no gold answer occurs"
        ]
        return self._verdict(session, item, gold is not None, evidence, matched_gold=gold)


class TokenF1Grading(_Baseline):
    """SQuAD token F1 against the best gold answer, judged correct at ``threshold`` (§2; Tables 3/13 baseline)."""

    name = plugin.qa_token_f1.name
    evaluator = "f1"
    Params = TokenF1Params
    # The token F1 is the score the threshold decides on (Tables 3/13's AUROC baseline): calibrate reads it.
    display = _Baseline.display.model_copy(update={"views": _Baseline.display.views.model_copy(update={
        "verdict": _Baseline.display.views.verdict.model_copy(update={"score": "f1"})})})  # fmt: skip

    async def run(self, item: QAItem, session: Session) -> Verdict:
        session.enter("match")
        scores = [token_f1(item.system_answer, g) for g in item.gold_answers]
        best = max(range(len(scores)), key=scores.__getitem__) if scores else None
        f1 = scores[best] if best is not None else 0.0
        judgment = f1 >= self.params.threshold
        session.note(
            "token_f1",
            f1=f1,
            best_gold=item.gold_answers[best] if best is not None else None,
            threshold=self.params.threshold,
            judgment=judgment,
        )
        evidence = [f"best token F1 {f1:.3f} (threshold {self.params.threshold})"]
        return self._verdict(session, item, judgment, evidence, f1=f1)
