"""One LMvLM cross-examination written once for the bare drivers (raw SDK, autogen client, Inspect AI).

It sends what ``protocols/cross_examination/protocol.py`` sends with its defaults (ChatGPT setup prompt, questions
fed one at a time, at most five follow-up rounds, greedy roles with ``max_tokens`` 256, a user-supplied claim given
to the examinee as ``claim_context``), message for message, so that the request bodies can be byte-identical to
voirdire's. The prompt texts are read from ``prompts/cross_examination/*.yaml``, the files voirdire renders.

A driver supplies only ``Call``: one chat completion for a list of ``{"role", "content"}`` messages, a temperature
and an optional seed. The reply readers here are the minimal ones the fake endpoint's replies need (numbered
questions, Yes/No, correct/incorrect); they are not voirdire's paper parsers.

Also here: the critical path of the ideal protocol graph (see ``docs/performance.md``).
"""

from __future__ import annotations

import asyncio
import math
import re
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

Message = dict[str, str]
Call = Callable[[list[Message], float, "int | None"], Awaitable[str]]
"""One chat completion: (messages, temperature, seed) -> the reply text."""

PROMPTS = Path(__file__).resolve().parents[2] / "prompts" / "cross_examination"
MAX_TOKENS = 256
GREEDY = 0.0


@dataclass(frozen=True)
class Params:
    examinations: int = 1
    sampling_temperature: float = 0.7
    max_followup_rounds: int = 5
    concurrent_examinations: bool = True
    """Run the examinations of LMvLM (Majority) together: they start from fresh conversations, so they are
    independent (voirdire's ``--no-concurrent-examinations`` runs them one after another)."""
    answers: str = "in_turn"
    """``in_turn``: the examinee answers a round's questions one after another, each answer seeing the earlier ones;
    ``independent``: each from the conversation as it stood before the round, all at once (voirdire's ``--answers``)."""


@cache
def template(name: str) -> str:
    """The single message template of ``prompts/cross_examination/<name>.yaml``."""
    import yaml

    spec = yaml.safe_load((PROMPTS / f"{name}.yaml").read_text(encoding="utf-8"))
    (message,) = spec["messages"]
    return str(message["template"])


def render(name: str, **values: str) -> str:
    return template(name).format(**values)


_NUMBERED = re.compile(r"\s*\d+[.)]\s+(\S.*)")


def split_questions(text: str) -> list[str]:
    """Numbered lines (the fake endpoint's questions), else the whole reply when it asks something."""
    listed = [m.group(1).strip() for line in text.splitlines() if (m := _NUMBERED.fullmatch(line))]
    return listed or ([text.strip()] if "?" in text else [])


def says_yes(text: str) -> bool:
    return text.strip().lower().startswith("yes")


def decision(text: str) -> str:
    low = text.lower()
    if "incorrect" in low:
        return "incorrect"
    return "correct" if "correct" in low else "inconclusive"


def numbered(answers: list[str]) -> str:
    return answers[0] if len(answers) == 1 else "\n".join(f"{i}. {a}" for i, a in enumerate(answers, 1))


async def _answers(call: Call, examinee: list[Message], questions: list[str], independent: bool) -> str:
    """The examinee answers one question at a time and remembers its answers (§2 Stage 1)."""
    if independent and len(questions) > 1:
        before = list(examinee)
        asked = [{"role": "user", "content": render("examinee_answer", questions=q)} for q in questions]
        replies = await asyncio.gather(*(call([*before, a], GREEDY, None) for a in asked))
        texts = [r.strip() for r in replies]
        for a, text in zip(asked, texts, strict=True):
            examinee.extend((a, {"role": "assistant", "content": text}))
        return numbered(texts)
    answers = []
    for q in questions:
        examinee.append({"role": "user", "content": render("examinee_answer", questions=q)})
        reply = (await call(examinee, GREEDY, None)).strip()
        examinee.append({"role": "assistant", "content": reply})
        answers.append(reply)
    return numbered(answers)


async def _examiner(call: Call, examiner: list[Message], content: str, temperature: float, seed: int | None) -> str:
    examiner.append({"role": "user", "content": content})
    reply = (await call(examiner, temperature, seed)).strip()
    examiner.append({"role": "assistant", "content": reply})
    return reply


async def examination(call: Call, claim: str, session_id: str, tag: str, p: Params) -> str:
    """One examination (§2); returns the examiner's decision."""
    examiner: list[Message] = []
    examinee: list[Message] = [{"role": "system", "content": render("claim_context", claim=claim)}]
    independent = p.answers == "independent"
    questions = split_questions(await _examiner(call, examiner, render("setup_chatgpt", claim=claim), GREEDY, None))
    answers = await _answers(call, examinee, questions, independent) if questions else None
    rounds = 0
    sampled = p.examinations > 1
    while answers is not None and rounds < p.max_followup_rounds:
        more = await _examiner(call, examiner, render("followup_ask", answers=answers), GREEDY, None)
        answers = None
        if not says_yes(more):
            break
        rounds += 1
        temperature = p.sampling_temperature if sampled else GREEDY
        seed = zlib.crc32(f"{session_id}:{tag}{rounds}".encode()) if sampled else None
        questions = split_questions(await _examiner(call, examiner, render("followup_questions"), temperature, seed))
        if not questions:
            break
        answers = await _answers(call, examinee, questions, independent)
    final = render("decision_after_answers", answers=answers) if answers is not None else render("decision")
    return decision(await _examiner(call, examiner, final, GREEDY, None))


async def examine_claim(call: Call, claim: str, session_id: str, p: Params) -> bool:
    """LMvLM, or LMvLM (Majority) with ``p.examinations`` > 1; True when the claim is accepted."""
    tags = [f"e{k + 1}." if p.examinations > 1 else "" for k in range(p.examinations)]
    if p.concurrent_examinations:
        decisions = await asyncio.gather(*(examination(call, claim, session_id, t, p) for t in tags))
    else:
        decisions = [await examination(call, claim, session_id, t, p) for t in tags]
    rejections = sum(d != "correct" for d in decisions)
    return not rejections > len(decisions) / 2


# ---------------------------------------------------------------------------------------------- the bound


@dataclass(frozen=True)
class Shape:
    """What one session does against the fake endpoint: q questions a round, K rounds of follow-ups."""

    questions: int = 2
    followups: int = 0
    examinations: int = 1
    max_followup_rounds: int = 5

    @property
    def yes_rounds(self) -> int:
        return min(self.followups, self.max_followup_rounds)

    @property
    def final_ask(self) -> int:
        """1 when the examiner is asked once more and says No; 0 when the round cap ends the follow-ups."""
        return 1 if self.yes_rounds < self.max_followup_rounds else 0

    def calls_per_examination(self) -> int:
        q, k = self.questions, self.yes_rounds
        return 1 + q + k * (2 + q) + self.final_ask + 1

    def requests_per_session(self) -> int:
        return self.examinations * self.calls_per_examination()

    def critical_path(self, chained_answers: bool = False) -> int:
        """Sequential calls on the longest dependency chain of one session.

        Ideal graph (``chained_answers=False``): the examinee's answers to one round's questions run together
        (one level), and the examinations of Majority run together (they share nothing), so Majority's path is
        one examination's. ``chained_answers=True``: the examinee answers one question after another, as it must
        when it remembers its earlier answers (the bodies voirdire sends today).
        """
        level = self.questions if chained_answers else 1
        k = self.yes_rounds
        return 1 + level + k * (2 + level) + self.final_ask + 1

    def run_path(self, p: Params) -> int:
        """The critical path of the graph a run's parameters allow: in-turn answers are chained, and examinations
        that do not run together add up."""
        path = self.critical_path(chained_answers=p.answers != "independent")
        return path if p.concurrent_examinations else path * self.examinations

    def in_flight(self, p: Params) -> int:
        """The most requests one session can have in flight under ``p``."""
        answers = self.questions if p.answers == "independent" else 1
        return answers * (self.examinations if p.concurrent_examinations else 1)


def bound_s(sessions: int, concurrency: int, path_calls: int, latency_s: float) -> float:
    """No schedule with at most ``concurrency`` sessions in flight beats ⌈S/C⌉ × path × latency: each session
    holds one of C slots for at least path × latency, and some slot must hold ⌈S/C⌉ sessions one after another."""
    if sessions <= 0:
        return 0.0
    return math.ceil(sessions / max(1, concurrency)) * path_calls * latency_s
