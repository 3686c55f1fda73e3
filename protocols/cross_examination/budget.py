"""The model calls of one claim's cross-examination (LMvLM §2, §4.1) and of the §4.1 baselines, declared beside their
machines for ``--estimate``.

One examination (§2, Figure 2): the examiner's setup questions, at most ``max_followup_rounds`` follow-up rounds of
"Do you have any follow-up questions?" and "What are the follow-up questions?" (§2 footnote 3: five), and the
decision: at most 2 + 2 × max_followups examiner calls. The examinee answers each turn's questions, one call per
question when they are fed one at a time (§2 Stage 1), one call per turn otherwise; a turn is the setup or a
follow-up round, so at most 1 + max_followups turns. The paper does not cap the questions of a turn, so without
``--max-questions`` the examinee's calls are an estimate: questions per turn from an earlier transcript of the same
protocol and models, else Table 8's mean. LMvLM (Majority) multiplies by its examinations (§4.1); a claim made
from the question costs the examinee one call first (§4.1). Adaptive Majority (``--adaptive``) stops once the majority
is decided: its bound is the full procedure's, and its estimate is the examinations per claim an earlier adaptive
transcript of the same protocol and models ran (without one, the bound).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from voirdire.kit.budget import Assumed, Budget, CallBudget, Figure, RoleCalls, merged

from .items import ClaimItem

QUESTIONS_PER_TURN = "questions_per_turn"
EXAMINATIONS_PER_CLAIM = "examinations_per_claim"
# Table 8, "# of questions per iteration", ChatGPT/ChatGPT (2.7 for GPT-3/GPT-3, 2.9 for ChatGPT/LLaMA).
TABLE_8_QUESTIONS = 3.1


def _questions_seen(statistics: Mapping[str, Any]) -> list[float]:
    """The questions of every turn of every examination a verdict records (0 for a turn whose reply had none)."""
    seen: list[float] = []
    for exam in statistics.get("examinations") or []:
        if isinstance(exam, Mapping):
            seen += [float(n) for n in exam.get("questions_per_iteration") or [] if isinstance(n, int | float)]
    return seen


def _examinations_run(statistics: Mapping[str, Any]) -> list[float]:
    """How many examinations an adaptive verdict ran (a full one's count says nothing of where adaptive stops)."""
    if statistics.get("examinations_planned") is None:
        return []
    return [float(len(statistics.get("examinations") or []))]


def _claim(item: ClaimItem) -> list[RoleCalls]:
    """§4.1: without a claim the examinee first answers the question; that answer is the claim."""
    return [RoleCalls.of(1, why="the claim made from the question (§4.1)")] if item.claim is None else []


def examination_budget(protocol: Any, item: ClaimItem, figures: Mapping[str, Figure]) -> Budget:
    p = protocol.params
    rounds, planned = p.max_followup_rounds, p.examinations
    turns = 1 + rounds
    exams: float = planned
    adaptive = ""
    seen = figures.get(EXAMINATIONS_PER_CLAIM)
    if getattr(p, "adaptive", False) and planned > 1:
        if seen is not None and 0 < seen.value < planned:
            exams = seen.value
            adaptive = f"; adaptive: {exams:.2f} of {planned} examinations per claim expected ({seen.source})"
        else:
            adaptive = f"; adaptive: at most {planned} examinations, no earlier adaptive run to expect fewer from"
    expected = exams < planned
    examiner = RoleCalls.of(
        round(exams * (2 + 2 * rounds)),
        bounded=not expected,
        why=f"{planned} examination(s) × (setup + {rounds} follow-up rounds × 2 + decision) (§2, footnote 3)"
        + adaptive,
    )
    cap = getattr(p, "max_questions", None)
    if not p.one_question_at_a_time:
        examinee = RoleCalls.of(
            round(exams * turns), bounded=not expected,
            why=f"{exams:g} × {turns} turns, each turn's questions in one call",
        )  # fmt: skip
    elif cap is not None:
        examinee = RoleCalls.of(
            round(exams * turns * cap), bounded=not expected,
            why=f"{exams:g} × {turns} turns × at most {cap} questions (--max-questions)",
        )  # fmt: skip
    else:
        q = figures[QUESTIONS_PER_TURN]
        per_exam = Figure(turns * q.value, q.source).count()
        examinee = RoleCalls.of(
            round(exams * per_exam),
            bounded=False,
            why=f"{exams:g} × {turns} turns × {q.value:.3g} questions per turn assumed ({q.source}); "
            "--max-questions N bounds it",
        )
    return merged({"examiner": [examiner], "examinee": [*_claim(item), examinee]})


def baseline_budget(protocol: Any, item: ClaimItem, figures: Mapping[str, Figure]) -> Budget:
    """AYS and IDK (§4.1): the claim when it is made from the question, then one question to the examinee."""
    return merged({"examinee": [*_claim(item), RoleCalls.of(1, why="the baseline's one question (§4.1)")]})


EXAMINATION_BUDGET = CallBudget(
    per_item=examination_budget,
    assumed={
        QUESTIONS_PER_TURN: Assumed(
            TABLE_8_QUESTIONS,
            "Table 8's mean questions per iteration, ChatGPT/ChatGPT",
            observe=_questions_seen,
        ),
        EXAMINATIONS_PER_CLAIM: Assumed(
            0.0,
            "no earlier adaptive run: the full procedure's examinations",
            observe=_examinations_run,
        ),
    },
    paper="LMvLM §2 (Figure 2, footnote 3: at most five follow-up rounds), §4.1 (Majority: three examinations)",
)
BASELINE_BUDGET = CallBudget(per_item=baseline_budget, paper="LMvLM §4.1 (AYS, IDK: one question each)")
