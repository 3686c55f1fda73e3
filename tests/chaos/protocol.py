"""A small protocol for the chaos suite: a witness answers and confirms, a judge rules. Three model calls a session,
two roles, multi-turn memory: the shape of the real protocols, with none of their parsing to get in the way."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from voirdire.registry.plugins import CommandSpec, Registration
from voirdire.reports import Report, counts
from voirdire.session.ask import Ask
from voirdire.session.machine import StateMachine
from voirdire.session.protocol import ParseError, Protocol, Session
from voirdire.transcript import DisplayHints, Transcript, Verdict


class Question(BaseModel):
    id: str
    question: str


class ChaosParams(BaseModel):
    warn: bool = Field(False, description="warn the same warning in every session")


def read_ruling(text: str) -> bool:
    word = text.strip().lower()
    if word.startswith("incorrect"):
        return False
    if word.startswith("correct"):
        return True
    raise ParseError(f"expected correct or incorrect, got {text[:40]!r}")


class Chaos(Protocol[Question, ChaosParams]):
    name = "chaos"
    paper = "none: the chaos suite's protocol"
    roles = ("witness", "judge")
    machine = StateMachine(
        initial=("answer",), edges={"answer": ("confirm",), "confirm": ("judge",), "judge": ("done",), "done": ()}
    )
    display = DisplayHints(colors={"witness": "36", "judge": "35"}, item_fields=("question",))
    Item = Question
    Params = ChaosParams
    prompt_folder = "chaos"
    prompt_root = Path(__file__).parent / "prompts"

    def item_id(self, item: Question) -> str:
        return item.id

    async def run(self, item: Question, session: Session) -> Verdict:
        if self.params.warn:
            warnings.warn("chaos: the same warning in every session", UserWarning, stacklevel=1)
        session.enter("answer", stage="answer")
        answer = await session.ask("witness", "answer", question=item.question)
        session.enter("confirm")
        await session.ask("witness", "confirm")
        session.enter("judge", stage="judge")
        ruling = await session.ask(
            "judge", "judge", Ask(parse=read_ruling, on_failure="undecided"), question=item.question, answer=answer.text
        )
        session.enter("done")
        decision = {True: "correct", False: "incorrect", None: "undecided"}[ruling.value]
        return session.verdict(decision, accepted=ruling.value)


def report(t: Transcript) -> Report:
    return Report(protocol="chaos", transcript=t.path, **counts(t.sessions.values()))  # type: ignore[arg-type]


registration = Registration(protocol=Chaos, report=report, cli=CommandSpec(help="the chaos suite's protocol"))


def replies(messages: list[dict[str, Any]]) -> str:
    """What a well-behaved model says to each of the protocol's prompts."""
    last = messages[-1]["content"] if messages else ""
    if last.startswith("Answer:"):
        return "Paris."
    if last.startswith("Are you sure"):
        return "Yes."
    if last.startswith("Is the answer right"):
        return "correct"
    return "?"
