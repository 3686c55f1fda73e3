"""LMvLM cross-examination (Cohen et al. 2023, "LM vs LM: Detecting Factual Errors via Cross Examination").

The examiner questions the examinee about the examinee's claim in three stages (§2, Figure 2, Table 1):

1. Setup: the examiner is told its role and the claim, and asks questions; each question is fed to the
   examinee with "Please answer the following questions regarding your claim."
2. Follow-up: the examiner gets the answers and is asked "Do you have any follow-up questions? Please answer
   with Yes or No."; on Yes, "What are the follow-up questions?", whose answers come back the same way; at most
   five rounds (§2 footnote 3). A Yes that already asks its questions ("No. Actually, wait, one more thing: 1.
   ...?") is a Yes with those questions: they go to the examinee without asking again.
3. Decision: "... Do you think it is correct or incorrect?"; anything but one of the two is inconclusive and
   counts as a rejection (§2).

LMvLM (Majority) (§4.1) runs three examinations, sampling the follow-up questions, and rejects the claim when
at least two of them conclude it is false. With no claim given, the examinee first makes one from the question
(§4.1).
"""

from __future__ import annotations

import asyncio
import zlib
from dataclasses import replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer, model_validator

from voirdire.kit import (
    Ask,
    Column,
    DisplayHints,
    Protocol,
    ReplySchema,
    Session,
    StateMachine,
    Verdict,
    VerdictView,
    Views,
)

from . import plugin
from .claims import brief_examinee, make_claim
from .items import ClaimItem, claim_item_from_record
from .outcome import ClaimOutcome, majority_margin
from .parsing import parse_decision, parse_yes_no, questions_in_answer, split_questions

QUESTIONS: Ask[list[str]] = Ask(
    parse=split_questions, expected="one or more questions", on_failure="no questions: go to the decision"
)
DISPLAY = DisplayHints(
    colors={"examiner": "36", "examinee": "33"},
    item_fields=("question", "claim"),
    gold_fields=("answers",),
    quiet_states=("answer", "done"),
    # §4.1: gold-correct when a gold answer or alias is a substring of the claim (scoring.gold_correct)
    views=Views(
        verdict=VerdictView(
            subject=Column(key="claim", label="claim examined"), gold_source="gold answers, alias match"
        )
    ),
)
# The closed answers of §2, asked through these schemas in structured mode (the paper's text is read otherwise).
YES_NO = ReplySchema.yes_no()
DECISION = ReplySchema.choice("correct", "incorrect")
# §2: Stage 1 setup -> answers; Stage 2 "follow-up questions?" -> questions -> answers, at most five rounds;
# Stage 3 decision. LMvLM (Majority) goes from one examination's decision to the next one's setup.
MACHINE = StateMachine(
    initial=("claim", "setup"),
    edges={
        "claim": ("setup",),
        "setup": ("answer", "decision"),
        "answer": ("followup_ask", "decision"),
        "followup_ask": ("followup_questions", "decision"),
        "followup_questions": ("answer", "decision"),
        "decision": ("setup", "done"),
        "done": (),
    },
)


class CrossExaminationParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    prompt_set: Literal["chatgpt", "gpt3"] = Field("chatgpt", description="Table 1 setup prompt")
    max_followup_rounds: int = Field(5, ge=0, description="follow-up rounds cap (§2 footnote 3: 5)")
    examinations: int = Field(1, ge=1, description="examinations per claim, majority vote (§4.1: 3)")
    sampling_temperature: float = Field(
        0.7, ge=0, description="follow-up sampling in LMvLM (Majority); the paper gives no value, 0.7 is ours"
    )
    one_question_at_a_time: bool = Field(
        True, description="§2 Stage 1 feeds the questions one at a time (off: each turn's questions together)"
    )
    answers: Literal["in_turn", "independent"] = Field(
        "in_turn",
        description="one question at a time: in_turn answers them one after another in the examinee's "
        "conversation (each answer sees the earlier ones); independent answers each from the conversation before "
        "the turn, all at once, then keeps them in question order (§2 does not say which; independent is faster)",
    )
    concurrent_examinations: bool = Field(
        True,
        description="LMvLM (Majority)'s examinations run at once (they are independent, §4.1); off: one after another",
    )
    adaptive: bool = Field(
        False,
        description="LMvLM (Majority) stops once its majority is decided: the first (N+1)/2 examinations run at "
        "once, the rest only while they can still change the vote (off by default: §4.1 runs all three); the "
        "verdict is the full procedure's",
    )
    max_questions: int | None = Field(
        None,
        ge=1,
        description="at most N questions of one examiner turn go to the examinee; the rest are dropped and recorded, "
        "the prompt unchanged (off by default: §2 sets no cap; it bounds the examinee's calls for --estimate)",
    )

    @model_serializer(mode="wrap")
    def _cap_only_when_set(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # Without the cap the parameters read as before it existed: earlier transcripts resume, default names hold.
        data: dict[str, Any] = handler(self)
        if data.get("max_questions") is None:
            data.pop("max_questions", None)
        if not data.get("adaptive"):  # likewise: a full Majority run names and resumes as before adaptive existed
            data.pop("adaptive", None)
        return data

    @model_validator(mode="after")
    def _odd_examinations(self) -> CrossExaminationParams:
        if self.examinations % 2 == 0:
            raise ValueError("examinations must be odd so that a majority exists (LMvLM (Majority) uses 3)")
        if self.adaptive and self.examinations == 1:
            raise ValueError("adaptive stops a majority vote early: it needs examinations of 3 or more (--majority)")
        return self


class Examination(BaseModel):
    """What one examination produced (the Table 8 statistics are computed from these)."""

    decision: Literal["correct", "incorrect", "inconclusive"]
    conclusion: str
    questions_per_iteration: list[int]
    followup_iterations: int
    parse_failures: int = 0
    questions_dropped: int = 0  # past --max-questions, never sent to the examinee

    @property
    def n_questions(self) -> int:
        return sum(self.questions_per_iteration)


def _numbered(answers: list[str]) -> str:
    if len(answers) == 1:
        return answers[0]
    return "\n".join(f"{i}. {a}" for i, a in enumerate(answers, 1))


class CrossExamination(Protocol[ClaimItem, CrossExaminationParams]):
    name, roles, paper = plugin.cross_examination.name, plugin.cross_examination.roles, plugin.cross_examination.paper
    independent_roles = (("examiner", "examinee"),)
    machine = MACHINE
    display = DISPLAY
    Item = ClaimItem
    Params = CrossExaminationParams
    Outcome = ClaimOutcome

    @classmethod
    def item_from_record(cls, record: dict[str, Any]) -> ClaimItem:
        return claim_item_from_record(record)

    # ------------------------------------------------------------------ §2 Stage 1 answers
    async def _answers(self, session: Session, questions: list[str]) -> str:
        session.enter("answer", stage=session.stage, turn=session.turn)
        if not self.params.one_question_at_a_time:
            joined = _numbered(questions)
            reply = await session.ask(
                "examinee", "examinee_answer", Ask(sender="examiner", quote=joined), questions=joined
            )
            return reply.text
        if self.params.answers == "independent" and len(questions) > 1:
            # Each question answered from the conversation as it stood before the turn, all at once; the questions
            # and answers then join the examinee's conversation in question order.
            forks = [session.branch(f"q{i}", fresh=False) for i in range(1, len(questions) + 1)]
            replies = await asyncio.gather(
                *(
                    b.ask("examinee", "examinee_answer", Ask(sender="examiner", quote=q), questions=q)
                    for b, q in zip(forks, questions, strict=True)
                )
            )
            for q, reply in zip(questions, replies, strict=True):
                session.seed("examinee", "examinee_answer", questions=q)
                session.remember("examinee", "assistant", reply.text, shown=False)
            session.join(forks)
            return _numbered([r.text.strip() for r in replies])
        answers = []
        for q in questions:
            reply = await session.ask("examinee", "examinee_answer", Ask(sender="examiner", quote=q), questions=q)
            answers.append(reply.text.strip())
        return _numbered(answers)

    async def _questions(
        self, session: Session, prompt: str, stats: dict[str, int], request: Ask[Any] = QUESTIONS, **variables: Any
    ) -> list[str]:
        reply = await session.ask("examiner", prompt, request, **variables)
        if reply.value is None:
            stats["parse_failures"] += 1
            return []
        return self._capped(session, reply.value, stats)

    def _capped(self, session: Session, questions: list[str], stats: dict[str, int]) -> list[str]:
        cap = self.params.max_questions
        if cap is not None and len(questions) > cap:
            # The examiner was not told of the cap (the paper's prompt); what it asked past it is kept on record.
            dropped = questions[cap:]
            session.note("questions_dropped", cap=cap, asked=len(questions), dropped=dropped)
            stats["questions_dropped"] += len(dropped)
            return questions[:cap]
        return questions

    # ------------------------------------------------------------------ one examination, §2
    async def examine(self, session: Session, claim: str, tag: str) -> Examination:
        p = self.params
        stats = {"parse_failures": 0, "questions_dropped": 0}
        per_iteration: list[int] = []

        # Stage 1: setup.
        session.enter("setup", stage=f"{tag}setup", turn=0)
        questions = await self._questions(session, f"setup_{p.prompt_set}", stats, claim=claim)
        per_iteration.append(len(questions))
        answers = await self._answers(session, questions) if questions else None

        # Stage 2: follow-up questions, until the examiner says No or the round cap is reached.
        rounds = 0
        while answers is not None and rounds < p.max_followup_rounds:
            session.enter("followup_ask", stage=f"{tag}followup", turn=rounds + 1)
            more = await session.ask(
                "examiner",
                "followup_ask",
                Ask(
                    parse=parse_yes_no,
                    schema=YES_NO,
                    expected="Yes or No",
                    on_failure="treated as No: go to the decision",
                ),
                answers=answers,
            )
            answers = None  # delivered
            if more.value is None:
                stats["parse_failures"] += 1
            if not more.value:
                break
            rounds += 1
            session.enter("followup_questions", stage=f"{tag}followup", turn=rounds)
            asked = questions_in_answer(more.text)
            if asked:  # "No. Actually, wait, one more thing: 1. ...?": a Yes with its questions, not asked again
                session.note("questions_in_followup_answer", questions=asked)
                asked = self._capped(session, asked, stats)
                per_iteration.append(len(asked))
                answers = await self._answers(session, asked)
                continue
            # Majority samples its follow-up questions (§4.1); each examination and round draws with its own seed,
            # so the examinations differ even under --seed or a cache, and a re-run draws the same again.
            sampled = p.examinations > 1
            questions = await self._questions(
                session,
                "followup_questions",
                stats,
                replace(
                    QUESTIONS,
                    temperature=p.sampling_temperature if sampled else None,
                    seed=zlib.crc32(f"{session.session_id}:{tag}{rounds}".encode()) if sampled else None,
                ),
            )
            per_iteration.append(len(questions))
            if not questions:
                break
            answers = await self._answers(session, questions)

        # Stage 3: factuality decision (answers still pending when the cap was reached go with it).
        session.enter("decision", stage=f"{tag}decision", turn=None)
        ask_kw: dict[str, Any] = {"answers": answers} if answers is not None else {}
        reply = await session.ask(
            "examiner",
            "decision_after_answers" if answers is not None else "decision",
            Ask(
                parse=parse_decision,
                schema=DECISION,
                expected="'correct' or 'incorrect'",
                on_failure="inconclusive: counted as a rejection (§2 Stage 3)",
            ),
            **ask_kw,
        )
        if reply.value is None:
            stats["parse_failures"] += 1
        return Examination(
            decision=reply.value or "inconclusive",
            conclusion=reply.text,
            questions_per_iteration=per_iteration,
            followup_iterations=rounds,
            parse_failures=stats["parse_failures"],
            questions_dropped=stats["questions_dropped"],
        )

    async def run(self, item: ClaimItem, session: Session) -> Verdict:
        generated = item.claim is None
        claim = item.claim or await make_claim(session, item)
        n = self.params.examinations
        exams: list[Examination] = []
        if n > 1 and self.params.concurrent_examinations:
            # LMvLM (Majority): independent examinations, each from fresh conversations (the first one keeps the
            # examinee's conversation that made the claim), run at once as branches of the session. Adaptive: in
            # rounds, each as many as the majority still needs; examination k is the same whichever rounds ran.
            while len(exams) < n and (batch := self._still_needed(exams)):
                first = len(exams)
                ks = range(first, first + batch)
                branches = [session.branch(f"e{k + 1}", fresh=k > 0 or not generated) for k in ks]
                for k, b in enumerate(branches, first):
                    if k > 0 or not generated:
                        brief_examinee(b, item, claim)
                exams += await asyncio.gather(
                    *(self.examine(b, claim, f"e{k + 1}.") for k, b in enumerate(branches, first))
                )
                session.join(branches)
        else:
            for k in range(n):
                if not self._still_needed(exams):
                    break
                if k > 0:  # each examination of LMvLM (Majority) starts from fresh conversations
                    await session.reset("examiner")
                    await session.reset("examinee")
                if k > 0 or not generated:
                    brief_examinee(session, item, claim)
                exams.append(await self.examine(session, claim, f"e{k + 1}." if n > 1 else ""))

        rejections = sum(e.decision != "correct" for e in exams)
        rejected = rejections > n / 2  # Majority: reject if at least two of three conclude false
        session.enter("done", stage="verdict")
        majority = "incorrect" if rejected else "correct"
        decision = exams[0].decision if n == 1 else majority
        statistics: dict[str, Any] = {
            "claim": claim,
            "claim_generated": generated,
            "examinations": [e.model_dump() | {"n_questions": e.n_questions} for e in exams],
            "rejections": rejections,
        }
        if self.params.adaptive and n > 1:
            statistics["examinations_planned"] = n
        return session.verdict(
            decision,
            accepted=not rejected,
            evidence=[e.conclusion for e in exams],
            statistics=statistics,
            guarantee=majority_margin([e.decision for e in exams], planned=n),
        )

    def _still_needed(self, exams: list[Examination]) -> int:
        """How many more examinations can decide the vote at once: all N, unless adaptive, where it is the
        majority's (N+1)/2 less the larger side's votes so far (0 once one side has a majority: §4.1's verdict can
        no longer change)."""
        n = self.params.examinations
        if not self.params.adaptive:
            return n - len(exams)
        reject = sum(e.decision != "correct" for e in exams)
        need = n // 2 + 1
        return max(0, need - max(reject, len(exams) - reject))
