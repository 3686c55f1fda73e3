"""Typed verdict statistics: a protocol's ``Outcome`` checks what a verdict writes and reads it back as fields."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel, Field, ValidationError

from voirdire.runner import run_in_memory
from voirdire.session.machine import StateMachine
from voirdire.session.protocol import Protocol, Session, Statistics
from voirdire.transcript import Verdict


class Item(BaseModel):
    id: str
    statistics: dict[str, Any]


class Params(BaseModel):
    pass


class Scores(Statistics):
    score: float
    reasons: list[str] = Field(default_factory=list)


class Scored(Protocol[Item, Params]):
    name = "scored_toy"
    roles = ()
    machine = StateMachine(initial=("done",), edges={"done": ()})
    Item, Params = Item, Params
    Outcome = Scores
    prompt_folder = "none"

    def item_id(self, item: Item) -> str:
        return item.id

    async def run(self, item: Item, session: Session) -> Verdict:
        session.enter("done")
        return session.verdict("scored", accepted=True, statistics=item.statistics)


def test_a_verdict_is_read_back_as_the_protocols_outcome() -> None:
    verdicts, _ = asyncio.run(run_in_memory(Scored(), [Item(id="a", statistics={"score": 0.5, "extra": 1})]))
    outcome = Scored.outcome(verdicts[0])
    assert isinstance(outcome, Scores) and outcome.score == 0.5 and outcome.reasons == []
    assert outcome.model_extra == {"extra": 1}  # keys the model does not declare are kept


def test_statistics_of_the_wrong_type_fail_where_they_are_written() -> None:
    with pytest.raises(ValidationError, match="score"):
        asyncio.run(run_in_memory(Scored(), [Item(id="a", statistics={"score": "high"})]))


def test_a_protocol_without_an_outcome_reads_its_statistics_as_they_are() -> None:
    verdict = Verdict(run_id="r", session_id="s", seq=0, decision="d", statistics={"anything": [1, 2]})
    assert Protocol.outcome(verdict).model_extra == {"anything": [1, 2]}
