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

The candidate is cut into sentences by a segmenter (``sentences.py``) and each reason is found in it
(``coverage.py``): a reason about text the candidate does not have is a recorded mismatch, never a score; a
sentence no reason is about is "not evaluated" and counts as z = −1 (``amc.py``); RAI rewrites only the text the
reasons are about and every other character of the candidate is kept. RAI's reply is matched to the sentences it
was given by content (``rai.align``): a sentence judged consistent that the improver leaves out, blanks or replaces
by a repeat is *lost*, a recorded failure that stops the loop (the improved candidate stays unscored and the verdict
is never "consistent"); a flagged sentence it deletes is *removed*, allowed and named in the evidence; a consistent
sentence it rewrites anyway is recorded with a warning. An AMC array of another length than the reasons
(``--amc-length as-returned``) is a recorded failure: scored as returned, never accepted.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from voirdire.kit import Ask, DisplayHints, Guarantee, Protocol, Session, StateMachine, Verdict
from voirdire.kit.replies import LONG_REPLY_CHARS

from . import plugin
from .amc import UndefinedScore, alpha_beta, amc_schema, as_paragraphs, consistency_score
from .coverage import Candidate, Status, disjoint
from .dce import PROMPTS, Level, SentenceReason, Task, reply_schema
from .items import DCRItem, item_from_record
from .outcome import DCROutcome
from .rai import ImprovedSummary, align, as_objects, rai_schema
from .sentences import SentenceChange, sentence_diff, split_sentences
from .views import VIEWS

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
    views=VIEWS,
)
Stop = Literal[
    "consistent",
    "max_rounds",
    "dce_unreadable",
    "reasons_not_in_candidate",
    "no_sentence_reason",
    "amc_unreadable",
    "amc_incomplete",
    "rai_unreadable",
    "rai_lost_sentence",
]

# Why a DCE reason is a mismatch (coverage.py's statuses that are never scored).
MISMATCH = {
    "not_in_candidate": "is about a sentence the candidate does not have",
    "repeated": "repeats a sentence an earlier reason is about",
}


@dataclass
class Improvement:
    """One RAI round: the improved candidate and what happened to the sentences the improver was given."""

    text: str
    removed: list[dict[str, Any]] = field(default_factory=list)  # flagged sentences deleted: {round, sentence, how}
    lost: list[dict[str, Any]] = field(default_factory=list)  # unflagged sentences gone: {round, sentence, how}
    rewrote_consistent: list[dict[str, Any]] = field(default_factory=list)  # {round, before, after}


@dataclass
class Ledger:
    """What every RAI round of one item removed, lost or rewrote against its instructions, for the verdict."""

    removed: list[dict[str, Any]] = field(default_factory=list)
    lost: list[dict[str, Any]] = field(default_factory=list)
    rewrote_consistent: list[dict[str, Any]] = field(default_factory=list)

    def add(self, step: Improvement) -> None:
        self.removed += step.removed
        self.lost += step.lost
        self.rewrote_consistent += step.rewrote_consistent


async def candidate_of(text: str) -> Candidate:
    """The candidate cut into sentences; a long one in a worker thread, as the core reads a long reply."""
    return await asyncio.to_thread(Candidate, text) if len(text) > LONG_REPLY_CHARS else Candidate(text)


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
    alpha_beta: Literal["zero", "sentence-level"] = Field(
        "zero",
        description="Eq. 3's alpha and beta: 0, as in the paper's experiments (§4.1), or the App. A.4 heuristic "
        "that leaves out reasons spanning several sentences",
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
    """One evaluation of Algorithm 1: the candidate and its sentences, DCE's reasons (Eq. 1) and where each is in
    the candidate, AMC's marks (Eq. 2, one per reason in the candidate, ``None`` for the others) and Ẑ (Eq. 3)."""

    round: int
    candidate: str
    sentences: list[str] = Field(default_factory=list)
    reasons: list[SentenceReason] = Field(default_factory=list)
    is_consistent: bool | None = None
    sentence_level: list[bool] = Field(default_factory=list)
    reason_status: list[Status] = Field(default_factory=list)
    reason_sentences: list[list[int]] = Field(default_factory=list)
    # An unmatched quote (not_in_candidate): the sentence it comes nearest, and the words they differ in.
    reason_near: list[int | None] = Field(default_factory=list)
    reason_differs: list[list[str]] = Field(default_factory=list)
    counted: list[bool] = Field(default_factory=list)
    not_evaluated: list[int] = Field(default_factory=list)
    marks: list[int | None] | None = None
    alpha: int = 0
    beta: int = 0
    score: float | None = None
    amc_complete: bool = True  # False: an as-returned AMC array of another length than the reasons

    def coverage(self, level: str) -> Guarantee:
        """DCR's guarantee of the score: how much of the candidate Ẑ rests on. Eq. 3 counts one z_i per sentence
        (k is "the number of sentences in the candidate paragraph", §3.2); a sentence DCE gave no reason about is
        not evaluated (z = −1 here), and one whose reasons carry no counted AMC mark is evaluated but not scored."""
        rows = self.sentence_table()
        k = len(rows)
        evaluated = sum(r["status"] != "not evaluated" for r in rows)
        scored = sum(r["status"] in ("consistent", "inconsistent") for r in rows)
        pct = f" ({100 * scored / k:.0f}%)" if k else ""
        return Guarantee(
            kind="sentence_coverage",
            statement=f"Ẑ (round {self.round}) rests on {scored} of {k} sentences scored{pct}, {evaluated} evaluated "
            f"by DCE; {k - evaluated} not evaluated, each counted z = −1 (Eq. 3)",
            values={
                "round": self.round,
                "level": level,
                "sentences": k,
                "evaluated": evaluated,
                "scored": scored,
                "not_evaluated": k - evaluated,
                "share_evaluated": evaluated / k if k else None,  # no share of a candidate with no sentence
                "share_scored": scored / k if k else None,
            },
            source="§3.1 Eq. 1 (DCE, sentence by sentence), §3.2 Eqs. 2-3 (AMC, one z_i per sentence); App. A.4",
        )

    def nearest(self, i: int) -> str:
        """What an unmatched quote comes nearest: " (nearest: sentence 2, which differs in six/eight)", or ""."""
        near = self.reason_near[i] if i < len(self.reason_near) else None
        if near is None:
            return ""
        differs = self.reason_differs[i] if i < len(self.reason_differs) else []
        return f" (nearest: sentence {near + 1}" + (f", which differs in {', '.join(differs)})" if differs else ")")

    @property
    def in_candidate(self) -> list[int]:
        """The reasons about text of the candidate: those AMC marks."""
        return [i for i, s in enumerate(self.reason_status) if s in ("scored", "paragraph")]

    def sentence_table(self) -> list[dict[str, Any]]:
        """Each sentence of the candidate with the counted reasons about it, their marks and its status."""
        rows = []
        for j, text in enumerate(self.sentences):
            about = [i for i, c in enumerate(self.counted) if c and j in self.reason_sentences[i]]
            aligned = self.marks is not None and len(self.marks) == len(self.reasons)
            marks = [m for i in about if aligned and (m := (self.marks or [])[i]) is not None]
            if j in self.not_evaluated:
                status = "not evaluated"
            elif not marks:
                status = "evaluated"
            else:
                status = "consistent" if marks and all(m > 0 for m in marks) else "inconsistent"
            rows.append({"index": j, "text": text, "status": status, "reasons": about, "marks": marks})
        return rows


class DCR(Protocol[DCRItem, DCRParams]):
    """DCR: divide-conquer evaluation, auto-metric conversion, reason-assisted improvement (Algorithm 1)."""

    name, roles, paper = plugin.dcr.name, plugin.dcr.roles, plugin.dcr.paper
    machine = MACHINE
    display = DISPLAY
    Item = DCRItem
    Params = DCRParams
    Outcome = DCROutcome

    @classmethod
    def item_from_record(cls, record: dict[str, Any]) -> DCRItem:
        return item_from_record(record)

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
        ledger = Ledger()
        improvements = 0
        stop: Stop = "max_rounds"
        for r in range(m + 1):
            session.enter("dce", stage=f"round {r}", turn=r)
            evaluation = await self.divide_conquer(session, r, item.reference, candidate, task)
            if evaluation is None:
                stop = "dce_unreadable"
                break
            history.append(evaluation)
            if not any(evaluation.counted):
                stop = "no_sentence_reason" if evaluation.in_candidate else "reasons_not_in_candidate"
                break
            session.enter("amc", stage=f"round {r}", turn=r)
            if await self.convert(session, evaluation) is None:
                stop = "amc_unreadable"
                break
            if not evaluation.amc_complete:  # RAI needs a mark per reason to know which sentences were flagged
                stop = "amc_incomplete"
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
            ledger.add(improved)
            candidate = improved.text
            improvements += 1
            if improved.lost:  # content nobody flagged is gone: the improved candidate is not evaluated
                stop = "rai_lost_sentence"
                break
        session.enter("done", stage="verdict")
        return self.conclude(session, item, task, history, stop, improvements, candidate, ledger)

    # ------------------------------------------------------------------ Eq. 1
    async def divide_conquer(
        self, session: Session, r: int, reference: str, candidate: str, task: Task
    ) -> Round | None:
        """DCE: reasons for each sentence of ``candidate`` against the entire ``reference``."""
        await session.reset("evaluator")  # each call is a fresh request, as in the authors' code
        unscored = "no score for the original candidate" if r == 0 else "the improved candidate stays unscored"
        cut = await candidate_of(candidate) if self.params.level == "sentence" else None
        reply = await session.ask(
            "evaluator",
            PROMPTS[(self.params.level, task)],
            Ask(
                schema=reply_schema(self.params.level, len(cut.sentences) if cut is not None else 1),
                on_failure=f"{unscored}; the loop stops (the verdict keeps the last scored candidate)",
            ),
            reference=reference,
            candidate=candidate,
        )
        if reply.value is None:
            return None
        reasons = reply.value.reasons()
        prompt = f"{self.prompt_folder}/{PROMPTS[(self.params.level, task)]}"
        if self.params.level == "paragraph":  # Table 11: one reason for the summary, the unit of §4.5
            evaluation = Round(
                round=r,
                candidate=candidate,
                sentences=split_sentences(candidate),
                reasons=reasons,
                is_consistent=reply.value.is_consistent,
                sentence_level=[True],
                reason_status=["scored"],
                reason_sentences=[list(range(len(split_sentences(candidate))))],
                counted=[True],
            )
        else:
            assert cut is not None
            evaluation = self.locate(r, cut, reasons, reply.value.is_consistent)
        session.note(
            "evaluation",
            **evaluation.model_dump(
                include={
                    "round",
                    "sentences",
                    "reasons",
                    "is_consistent",
                    "sentence_level",
                    "reason_status",
                    "reason_sentences",
                    "reason_near",
                    "reason_differs",
                    "not_evaluated",
                }
            ),
        )
        stray = [i for i, st in enumerate(evaluation.reason_status) if st in ("not_in_candidate", "repeated")]
        if stray:
            session.parse_failure(
                "evaluator",
                prompt,
                expected="reasons about sentences of the candidate (Eq. 1: one reason per sentence s_i)",
                raw=reply.text,
                error="; ".join(
                    f"reason {i + 1} {MISMATCH[evaluation.reason_status[i]]}: {reasons[i].sentence[:120]!r}"
                    + evaluation.nearest(i)
                    for i in stray
                ),
                outcome="a mismatch: those reasons are not scored and not given to RAI"
                + ("" if any(evaluation.counted) else f"; nothing left to score: {unscored}; the loop stops"),
            )
        if not any(evaluation.counted) and evaluation.in_candidate:
            session.parse_failure(
                "evaluator",
                prompt,
                expected="at least one reason about one sentence of the candidate (App. A.4)",
                raw=reply.text,
                error="every reason is about several sentences of the candidate: k + beta = 0 in Eq. 3",
                outcome=f"{unscored}; the loop stops",
            )
        return evaluation

    def locate(self, r: int, cut: Candidate, reasons: list[SentenceReason], is_consistent: bool) -> Round:
        """Where each reason is in the candidate (``coverage.py``), which reasons count in Eq. 3 (all in the
        candidate; with the A.4 heuristic, only those about one sentence) and the sentences left unevaluated."""
        located = cut.locate([g.sentence for g in reasons])
        a4 = self.params.alpha_beta == "sentence-level"
        counted = [loc.status == "scored" or (loc.status == "paragraph" and not a4) for loc in located]
        return Round(
            round=r,
            candidate=cut.text,
            sentences=cut.sentences,
            reasons=reasons,
            is_consistent=is_consistent,
            sentence_level=[loc.status == "scored" for loc in located],
            reason_status=[loc.status for loc in located],
            reason_sentences=[loc.sentences for loc in located],
            reason_near=[loc.near for loc in located],
            reason_differs=[loc.differs for loc in located],
            counted=counted,
            not_evaluated=cut.not_evaluated(located, counted),
        )

    # ------------------------------------------------------------------ Eq. 2 and 3
    async def convert(self, session: Session, evaluation: Round) -> float | None:
        """AMC marks every reason about the candidate +1/−1; Ẑ (Eq. 3) is computed here from the marks, α and β
        (App. A.4, with the heuristic on) and the sentences no counted reason is about (each z = −1)."""
        given = evaluation.in_candidate
        k = len(given)
        strict = self.params.amc_length == "strict"
        await session.reset("converter")
        reply = await session.ask(
            "converter",
            "amc",
            Ask(
                schema=amc_schema(k if strict else None),
                expected=f"a JSON object with 'reason' and 'answer', {k} marks of -1 or 1" if strict else "",
                on_failure="no marks: the candidate is unscored and the loop stops",
            ),
            paragraphs=as_paragraphs([evaluation.reasons[i].reason for i in given]),
        )
        if reply.value is None:
            return None
        z = list(reply.value.answer)
        u = len(evaluation.not_evaluated)
        if len(z) != k:
            evaluation.amc_complete = False
            session.parse_failure(
                "converter",
                f"{self.prompt_folder}/amc",
                expected=f"one mark per reason: {k} marks of -1 or 1 (Eq. 2)",
                raw=reply.text,
                error=f"{len(z)} marks for {k} reasons",
                outcome="scored as returned (the authors' code, sum(answer) / len(answer)) but not as a complete "
                "array: the candidate is not accepted, RAI is not run and the loop stops",
            )
        if len(z) == k:
            alpha, beta = alpha_beta(z, [evaluation.counted[i] for i in given])
            marks: list[int | None] = [None] * len(evaluation.reasons)
            for i, mark in zip(given, z, strict=True):
                marks[i] = mark
        else:  # as-returned: the authors' code scores the array it got, sum(answer) / len(answer)
            alpha, beta, marks = 0, 0, list(z)
        try:
            score = consistency_score(z, alpha, beta, u)
        except UndefinedScore:  # pragma: no cover - a round without a counted reason never reaches AMC
            return None
        evaluation.marks, evaluation.alpha, evaluation.beta, evaluation.score = marks, alpha, beta, score
        session.note(
            "score",
            round=evaluation.round,
            marks=marks,
            counted=evaluation.counted,
            k=len(z),
            alpha=alpha,
            beta=beta,
            not_evaluated=u,
            score=score,
            sentence_table=evaluation.sentence_table(),
        )
        return score

    # ------------------------------------------------------------------ Eq. 4
    async def improve(self, session: Session, r: int, reference: str, evaluation: Round) -> Improvement | None:
        """RAI rewrites the inconsistent sentences (or the summary, at paragraph level) from DCE's reasons."""
        await session.reset("improver")
        if self.params.level != "paragraph":
            return await self.improve_sentences(session, r, reference, evaluation)
        reply = await session.ask(
            "improver",
            "rai_paragraph",
            Ask(
                schema=ImprovedSummary, on_failure="no improved summary: the loop stops with the last scored candidate"
            ),
            reference=reference,
            candidate=evaluation.candidate,
            reason=evaluation.reasons[0].reason,
        )
        if reply.value is None:
            return None
        before, after = [evaluation.candidate], [reply.value.improved_summary.strip()]
        changes = sentence_diff(before, after)
        improved = after[0]
        step = Improvement(improved)
        if not improved:  # a blank summary loses every sentence, and nobody flagged the summary away
            step.lost.append({"round": r, "sentence": evaluation.candidate, "how": "blanked"})
            self.record_lost(session, r, f"{self.prompt_folder}/rai_paragraph", reply.text, step.lost)
        session.note(
            "candidate_diff",
            round=r,
            changed=[c.model_dump() for c in changes],
            unchanged=len(before) - len(changes),
            kept=[],
            before=evaluation.candidate,
            after=improved,
            lost=[g["sentence"] for g in step.lost],
        )
        return step

    async def improve_sentences(
        self, session: Session, r: int, reference: str, evaluation: Round
    ) -> Improvement | None:
        """Table 10 on the text the counted reasons are about; the improved sentences replace that text in the
        candidate and every other character stays where it was."""
        cut = await candidate_of(evaluation.candidate)
        located = cut.locate([g.sentence for g in evaluation.reasons])
        given = disjoint(located, [i for i, c in enumerate(evaluation.counted) if c])
        spans = [span for i in given if (span := located[i].span) is not None]
        _, before = cut.rebuild(spans, [""] * len(spans))  # the candidate's own text of each span
        prompt = "rai_sentence"
        reply = await session.ask(
            "improver",
            prompt,
            Ask(
                schema=rai_schema(len(given)),
                on_failure="no improved sentences: the loop stops with the last scored candidate",
            ),
            reference=reference,
            sentences=as_objects([(b, evaluation.reasons[i].reason) for b, i in zip(before, given, strict=True)]),
        )
        if reply.value is None:
            return None
        touched = {j for i in given for j in located[i].sentences}
        kept = [text for j, text in enumerate(cut.sentences) if j not in touched]
        marks = evaluation.marks or []
        flagged = [i < len(marks) and marks[i] == -1 for i in given]
        entries = reply.value.root
        aligned = align(before, entries, flagged, kept)
        if not aligned.complete:
            problems = [f"entry {j + 1} repeats a sentence another entry took" for j in aligned.duplicated]
            problems += [f"entry {j + 1} is about no given sentence" for j in aligned.unmatched]
            problems += [f"no entry for {before[i][:120]!r}" for i, how in aligned.why.items() if how == "left out"]
            session.parse_failure(
                "improver",
                f"{self.prompt_folder}/{prompt}",
                expected=f"one improved sentence per given sentence ({len(before)}, Eq. 4), matched by its text",
                raw=reply.text,
                error=f"{len(entries)} entries for {len(before)} sentences: " + "; ".join(problems),
                outcome="entries are matched by content, duplicates and strays dropped; a flagged sentence with no "
                "entry is removed, an unflagged one is lost (the loop stops)",
            )
        after = aligned.sentences
        improved, _ = cut.rebuild(spans, after)
        step = Improvement(improved)
        step.removed = [{"round": r, "sentence": before[i], "how": aligned.why[i]} for i in aligned.removed]
        step.lost = [{"round": r, "sentence": before[i], "how": aligned.why[i]} for i in aligned.lost]
        step.rewrote_consistent = [
            {"round": r, "before": before[i], "after": after[i]} for i in aligned.rewrote_consistent
        ]
        if step.lost:
            self.record_lost(session, r, f"{self.prompt_folder}/{prompt}", reply.text, step.lost)
        changes = sentence_diff(before, after)
        session.note(
            "candidate_diff",
            round=r,
            changed=[c.model_dump() for c in changes],
            unchanged=len(before) - len(changes),
            kept=kept,
            before=evaluation.candidate,
            after=improved,
            removed=[g["sentence"] for g in step.removed],
            lost=[g["sentence"] for g in step.lost],
            rewrote_consistent=[f"{g['before']} → {g['after']}" for g in step.rewrote_consistent],
        )
        return step

    @staticmethod
    def record_lost(session: Session, r: int, prompt: str, raw: str, lost: list[dict[str, Any]]) -> None:
        """A sentence judged consistent is gone from the improved candidate: a failure of Eq. 4, recorded."""
        session.parse_failure(
            "improver",
            prompt,
            expected="every sentence judged consistent retained (Eq. 4, §3.3)",
            raw=raw,
            error="; ".join(f"lost ({g['how']}): {g['sentence'][:120]!r}" for g in lost),
            outcome=f"the round-{r} candidate is not evaluated, the loop stops and the verdict is not consistent",
        )

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
        ledger: Ledger | None = None,
    ) -> Verdict:
        """The final score Ẑ, the final candidate (the last one scored) and the round history; an improved
        candidate whose evaluation could not be read is kept apart as ``unscored_candidate``."""
        ledger = ledger or Ledger()
        scored = [h for h in history if h.score is not None]
        final = scored[-1] if scored else None
        if final is None or not final.amc_complete:  # an incomplete AMC array is never a measurement to accept
            decision, accepted = "unscored", None
        else:
            accepted = final.score == 1
            decision = "consistent" if accepted else "inconsistent"
        if ledger.lost and accepted:  # never reached (RAI runs only below Ẑ = 1); kept as the rule it enforces
            decision, accepted = "unscored", None
        reported = final.candidate if final else item.candidate
        removed = [g for g in ledger.removed if g["round"] <= (final.round if final else 0)]
        start, end = len(split_sentences(item.candidate)), len(split_sentences(reported))
        evidence = self.evidence(final) if final is not None else []
        if final is not None and not final.amc_complete:
            evidence.append(
                f"warning: AMC returned {len([m for m in final.marks or [] if m is not None])} marks for "
                f"{len(final.in_candidate)} reasons: scored as returned, not accepted"
            )
        evidence += [f"lost ({g['how']}, round {g['round']}): {g['sentence']}" for g in ledger.lost]
        evidence += [f"removed ({g['how']}, round {g['round']}): {g['sentence']}" for g in removed]
        evidence += [
            f"warning: the improver rewrote a sentence judged consistent (round {g['round']}): "
            f"{g['before']} → {g['after']}"
            for g in ledger.rewrote_consistent
        ]
        lost_count = end < start - len(removed)
        if lost_count:
            evidence.append(f"the final candidate has {end} sentences, the original {start}: sentences were lost")
        return session.verdict(
            decision,
            accepted=accepted,
            evidence=evidence,
            statistics={
                "score": final.score if final else None,
                "initial_score": history[0].score if history else None,
                "scores": [h.score for h in history],
                "candidate": reported,
                "improved": final is not None and final.candidate != item.candidate,
                "rounds": improvements,
                "unscored_candidate": last if final is None or last != final.candidate else None,
                "stopped": stop,
                "task": task,
                "level": self.params.level,
                "is_consistent": final.is_consistent if final else None,
                "sentences_start": start,
                "sentences_end": end,
                "lost_sentences": lost_count or bool(ledger.lost),
                "lost": ledger.lost,
                "removed": removed,
                "rewrote_consistent": ledger.rewrote_consistent,
                "amc_complete": final.amc_complete if final else None,
                "not_evaluated": [final.sentences[j] for j in final.not_evaluated] if final else [],
                "history": [h.model_dump(mode="json") for h in history],
            },
            guarantee=final.coverage(self.params.level) if final is not None else None,
        )

    @staticmethod
    def evidence(final: Round) -> list[str]:
        """One line per reason (its mark, or why it has none) and one per sentence that was not evaluated."""
        aligned = final.marks is not None and len(final.marks) == len(final.reasons)
        lines = []
        for i, g in enumerate(final.reasons):
            mark = final.marks[i] if aligned and final.marks is not None else None
            status = final.reason_status[i] if i < len(final.reason_status) else "scored"
            if mark is not None:
                left_out = "" if final.counted[i] else " (left out of Eq. 3: App. A.4)"
                lines.append(f"{'+1' if mark > 0 else '-1'} {g.sentence}: {g.reason}{left_out}")
            elif status == "not_in_candidate":
                lines.append(f"not in the candidate, not scored: {g.sentence!r}{final.nearest(i)}: {g.reason}")
            elif status == "repeated":
                lines.append(f"repeated, not scored: {g.sentence!r}: {g.reason}")
        lines += [f"not evaluated, counted -1: {final.sentences[j]}" for j in final.not_evaluated]
        return lines


__all__ = ["DCR", "DCRParams", "Round", "SentenceChange"]
