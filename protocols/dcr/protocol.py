"""DCR (Cui et al. 2024, "DCR-Consistency: Divide-Conquer-Reasoning for Consistency Evaluation and Improvement of
Large Language Models"): Algorithm 1 as a declared state machine.

Three LLM agents (Fig. 1), each a role here:

- **evaluator**, the Divide-Conquer Evaluator (§3.1, Eq. 1): each sentence of the candidate against the entire
  reference, with a reason per sentence (Tables 7, 8; Table 11 at paragraph level);
- **converter**, the Auto-Metric Converter (§3.2, Eq. 2): each reason marked +1 or −1 (Table 9); the score Ẑ of
  Eq. 3 is computed from the marks in code (``amc.py``);
- **improver**, the Reason-Assisted Improver (§3.3, Eq. 4): the inconsistent sentences rewritten from the reasons
  (Table 10; Table 12 at paragraph level).

Algorithm 1 runs DCE → AMC → RAI → DCE … and stops when the candidate is fully consistent (Ẑ = 1, §4.4) or after
``m`` improvement rounds. Every improved candidate is evaluated again, as §4.4 re-evaluates RAI's output and Fig. 4
counts consistent candidates after each round; Algorithm 1 as printed returns the last improved candidate without
evaluating it. The verdict carries the score of the last candidate that was scored, that candidate and the round
history. A reply that does not fit its schema is a parse failure with the outcome named where it is asked.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from voirdire.machine import StateMachine
from voirdire.protocol import Protocol, Session
from voirdire.transcript import DisplayHints, Verdict

from .amc import UndefinedScore, alpha_beta, amc_schema, as_paragraphs, consistency_score
from .dce import PROMPTS, Level, SentenceReason, Task, reply_schema
from .items import DCRItem, item_from_record
from .rai import ImprovedSummary, align, as_objects, rai_schema
from .sentences import SentenceChange, is_sentence_level, join_sentences, sentence_diff

PAPER = (
    "Cui, Zhang, Li, Lopez, Das, Malin, Kumar 2024. DCR-Consistency: Divide-Conquer-Reasoning for Consistency "
    "Evaluation and Improvement of Large Language Models (../shared/papers/dcr-consistency.txt)"
)
# Algorithm 1: dce -> amc -> (rai -> dce ...); done when the candidate scores 1, after m rounds, or when a reply
# that the next stage needs could not be read.
MACHINE = StateMachine(
    initial=("dce",),
    edges={"dce": ("amc", "done"), "amc": ("rai", "done"), "rai": ("dce", "done"), "done": ()},
)
DISPLAY = DisplayHints(
    colors={"evaluator": "34", "converter": "35", "improver": "32"},
    item_fields=("reference", "candidate"),
    gold_fields=("human",),
    quiet_states=("done",),
)
Stop = Literal["consistent", "max_rounds", "dce_unreadable", "no_sentence_reason", "amc_unreadable", "rai_unreadable"]


class DCRParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    task: Task | None = Field(
        None,
        description="DCE prompt: semantic (Table 7) or summarization (Table 8); default: the dataset's task "
        "(semantic for PAWS/MSRP), else summarization",
    )
    level: Level = Field(
        "sentence", description="sentence-level DCE/RAI (Tables 7-10), or paragraph level (Tables 11-12, §4.5)"
    )
    rounds: int = Field(
        3, ge=0, description="m, the improvement rounds of Algorithm 1 (0: evaluate only, DCE-AMC of Tables 2-4)"
    )
    alpha_beta: Literal["sentence-level", "zero"] = Field(
        "sentence-level",
        description="Eq. 3's alpha and beta: leave out reasons not about one sentence (App. A.4), or 0 (§4.1)",
    )
    amc_length: Literal["strict", "as-returned"] = Field(
        "strict",
        description="an AMC array must hold one mark per reason (Eq. 2; else the round is unscored), or is "
        "scored as returned, as the authors' released code does",
    )

    @model_validator(mode="after")
    def _paragraph_prompts_are_for_summaries(self) -> DCRParams:
        if self.level == "paragraph" and self.task == "semantic":
            raise ValueError("level paragraph: the paper's paragraph-level prompts (Tables 11-12) are for summaries")
        return self


class Round(BaseModel):
    """One evaluation of Algorithm 1: the candidate, DCE's reasons (Eq. 1), AMC's marks (Eq. 2) and Ẑ (Eq. 3)."""

    round: int
    candidate: str
    reasons: list[SentenceReason] = Field(default_factory=list)
    is_consistent: bool | None = None
    sentence_level: list[bool] = Field(default_factory=list)
    marks: list[int] | None = None
    alpha: int = 0
    beta: int = 0
    score: float | None = None


class DCR(Protocol[DCRItem, DCRParams]):
    """DCR: divide-conquer evaluation, auto-metric conversion, reason-assisted improvement (Algorithm 1)."""

    name = "dcr"
    paper = PAPER
    roles = ("evaluator", "converter", "improver")
    machine = MACHINE
    display = DISPLAY
    Item = DCRItem
    Params = DCRParams
    prompt_folder = "dcr"

    @classmethod
    def item_from_record(cls, record: dict[str, Any]) -> DCRItem:
        return item_from_record(record)

    def item_id(self, item: DCRItem) -> str:
        return item.id

    def required_roles(self) -> tuple[str, ...]:
        return self.roles if self.params.rounds > 0 else ("evaluator", "converter")

    def task(self, item: DCRItem) -> Task:
        if self.params.level == "paragraph":
            return "summarization"
        return self.params.task or item.task or "summarization"

    # ------------------------------------------------------------------ Algorithm 1
    async def run(self, item: DCRItem, session: Session) -> Verdict:
        m = self.params.rounds
        task = self.task(item)
        candidate = item.candidate
        history: list[Round] = []
        improvements = 0
        stop: Stop = "max_rounds"
        for r in range(m + 1):
            session.enter("dce", stage=f"round {r}", turn=r)
            evaluation = await self.divide_conquer(session, r, item.reference, candidate, task)
            if evaluation is None:
                stop = "dce_unreadable"
                break
            history.append(evaluation)
            if not any(evaluation.sentence_level):
                stop = "no_sentence_reason"
                break
            session.enter("amc", stage=f"round {r}", turn=r)
            if await self.convert(session, evaluation) is None:
                stop = "amc_unreadable"
                break
            if evaluation.score == 1:
                stop = "consistent"
                break
            if r == m:
                break
            session.enter("rai", stage=f"round {r + 1}", turn=r + 1)
            improved = await self.improve(session, r + 1, item.reference, evaluation)
            if improved is None:
                stop = "rai_unreadable"
                break
            candidate = improved
            improvements += 1
        session.enter("done", stage="verdict")
        return self.conclude(session, item, task, history, stop, improvements, candidate)

    # ------------------------------------------------------------------ Eq. 1
    async def divide_conquer(
        self, session: Session, r: int, reference: str, candidate: str, task: Task
    ) -> Round | None:
        """DCE: reasons for each sentence of ``candidate`` against the entire ``reference``."""
        await session.reset("evaluator")  # each call is a fresh request, as in the authors' code
        unscored = "no score for the original candidate" if r == 0 else "the improved candidate stays unscored"
        reply = await session.ask(
            "evaluator",
            PROMPTS[(self.params.level, task)],
            schema=reply_schema(self.params.level),
            on_failure=f"{unscored}; the loop stops (the verdict keeps the last scored candidate)",
            reference=reference,
            candidate=candidate,
        )
        if reply.value is None:
            return None
        reasons = reply.value.reasons()
        sentence_level = [
            self.params.level == "paragraph"
            or self.params.alpha_beta == "zero"
            or is_sentence_level(g.sentence, candidate)
            for g in reasons
        ]
        evaluation = Round(
            round=r,
            candidate=candidate,
            reasons=reasons,
            is_consistent=reply.value.is_consistent,
            sentence_level=sentence_level,
        )
        session.note(
            "evaluation", **evaluation.model_dump(include={"round", "reasons", "is_consistent", "sentence_level"})
        )
        if not any(sentence_level):
            session.parse_failure(
                "evaluator",
                f"{self.prompt_folder}/{PROMPTS[(self.params.level, task)]}",
                expected="at least one reason about one sentence of the candidate (App. A.4)",
                raw=reply.text,
                error="every reason is about the whole candidate: k + beta = 0 in Eq. 3",
                outcome=f"{unscored}; the loop stops",
            )
        return evaluation

    # ------------------------------------------------------------------ Eq. 2 and 3
    async def convert(self, session: Session, evaluation: Round) -> float | None:
        """AMC marks every reason +1/−1; Ẑ (Eq. 3) is computed here from the marks, α and β from App. A.4."""
        k = len(evaluation.reasons)
        strict = self.params.amc_length == "strict"
        await session.reset("converter")
        reply = await session.ask(
            "converter",
            "amc",
            schema=amc_schema(k if strict else None),
            expected=f"a JSON object with 'reason' and 'answer', {k} marks of -1 or 1" if strict else "",
            on_failure="no marks: the candidate is unscored and the loop stops",
            paragraphs=as_paragraphs([g.reason for g in evaluation.reasons]),
        )
        if reply.value is None:
            return None
        z = list(reply.value.answer)
        if len(z) == k:
            alpha, beta = alpha_beta(z, evaluation.sentence_level)
        else:  # as-returned: the authors' code scores the array it got, sum(answer) / len(answer)
            alpha, beta = 0, 0
        try:
            score = consistency_score(z, alpha, beta)
        except UndefinedScore:  # pragma: no cover - a round without sentence-level reasons never reaches AMC
            return None
        evaluation.marks, evaluation.alpha, evaluation.beta, evaluation.score = z, alpha, beta, score
        session.note("score", round=evaluation.round, marks=z, k=len(z), alpha=alpha, beta=beta, score=score)
        return score

    # ------------------------------------------------------------------ Eq. 4
    async def improve(self, session: Session, r: int, reference: str, evaluation: Round) -> str | None:
        """RAI rewrites the inconsistent sentences (or the summary, at paragraph level) from DCE's reasons."""
        await session.reset("improver")
        if self.params.level == "paragraph":
            reply = await session.ask(
                "improver",
                "rai_paragraph",
                schema=ImprovedSummary,
                on_failure="no improved summary: the loop stops with the last scored candidate",
                reference=reference,
                candidate=evaluation.candidate,
                reason=evaluation.reasons[0].reason,
            )
            if reply.value is None:
                return None
            before, after = [evaluation.candidate], [reply.value.improved_summary.strip()]
        else:
            given = [g for g, one in zip(evaluation.reasons, evaluation.sentence_level, strict=True) if one]
            before = [g.sentence for g in given]
            prompt = "rai_sentence"
            reply = await session.ask(
                "improver",
                prompt,
                schema=rai_schema(len(given)),
                on_failure="no improved sentences: the loop stops with the last scored candidate",
                reference=reference,
                sentences=as_objects(given),
            )
            if reply.value is None:
                return None
            aligned = align(before, reply.value.root)
            if not aligned.complete:
                session.parse_failure(
                    "improver",
                    f"{self.prompt_folder}/{prompt}",
                    expected=f"one improved sentence per given sentence ({len(before)}, Eq. 4)",
                    raw=reply.text,
                    error=f"{len(reply.value.root)} entries for {len(before)} sentences",
                    outcome="sentences without an entry are kept unchanged, entries matching no sentence dropped",
                )
            after = aligned.sentences
        changes = sentence_diff(before, after)
        improved = join_sentences(after)
        session.note(
            "candidate_diff",
            round=r,
            changed=[c.model_dump() for c in changes],
            unchanged=len(before) - len(changes),
            before=evaluation.candidate,
            after=improved,
        )
        return improved

    # ------------------------------------------------------------------ the verdict
    def conclude(
        self,
        session: Session,
        item: DCRItem,
        task: Task,
        history: list[Round],
        stop: Stop,
        improvements: int,
        last: str,
    ) -> Verdict:
        """The final score Ẑ, the final candidate (the last one scored) and the round history; an improved
        candidate whose evaluation could not be read is kept apart as ``unscored_candidate``."""
        scored = [h for h in history if h.score is not None]
        final = scored[-1] if scored else None
        if final is None:
            decision, accepted = "unscored", None
        else:
            accepted = final.score == 1
            decision = "consistent" if accepted else "inconsistent"
        evidence = []
        if final is not None and final.marks is not None and len(final.marks) == len(final.reasons):
            evidence = [
                f"{'+1' if z > 0 else '-1'} {g.sentence}: {g.reason}"
                for z, g in zip(final.marks, final.reasons, strict=True)
            ]
        return session.verdict(
            decision,
            accepted=accepted,
            evidence=evidence,
            statistics={
                "score": final.score if final else None,
                "initial_score": history[0].score if history else None,
                "scores": [h.score for h in history],
                "candidate": final.candidate if final else item.candidate,
                "improved": final is not None and final.candidate != item.candidate,
                "rounds": improvements,
                "unscored_candidate": last if final is None or last != final.candidate else None,
                "stopped": stop,
                "task": task,
                "level": self.params.level,
                "is_consistent": final.is_consistent if final else None,
                "history": [h.model_dump(mode="json") for h in history],
            },
        )


__all__ = ["DCR", "PAPER", "DCRParams", "Round", "SentenceChange"]
