"""LMvLM (Majority)'s examinations as concurrent branches, request coalescing, and independently answered
questions: scripted models, so every path is deterministic."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from autogen_core.models import CreateResult, LLMMessage

from voirdire.chat.turns import chat_of
from voirdire.models import RoleSettings, Script, ScriptedChatCompletionClient, ScriptRule
from voirdire.protocols.cross_examination import ClaimItem, CrossExamination, CrossExaminationParams
from voirdire.runner import run_protocol
from voirdire.transcript import Message, ModelCall, Transcript, load, reading_order

from .test_protocol import DECIDE, FOLLOWUP_ASK, FOLLOWUP_Q, SETUP, examinee

CLAIM = ClaimItem(id="c1", claim="The Eiffel Tower is in Rome.")


class Slow(ScriptedChatCompletionClient):
    """A scripted model that takes a little while per request and counts how many it answers at once. With
    ``together``, its first requests are held until that many are in flight at once, then answered in the order
    they came: whether the run sends them together is what it decided, not a busy machine's timing."""

    def __init__(self, script: Script, name: str, together: int = 1) -> None:
        super().__init__(script, name=name)
        self.in_flight = 0
        self.most = 0
        self.together = together
        self.all_in = asyncio.Event()

    async def _complete(self, messages: Sequence[LLMMessage], args: Mapping[str, Any]) -> CreateResult:
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        try:
            if self.together > 1:
                if self.most >= self.together and not self.all_in.is_set():
                    self.all_in.set()
                    await asyncio.sleep(0)  # those it woke go first: answered in the order they came
                async with asyncio.timeout(30):  # a run that never sends them together fails, never hangs
                    await self.all_in.wait()
            else:
                await asyncio.sleep(0.01)
            return await super()._complete(messages, args)
        finally:
            self.in_flight -= 1


def slow_examiner(together: int = 1) -> Slow:
    return Slow(
        Script(
            rules=[
                ScriptRule(match=SETUP, reply="1. Who designed it?\n2. When was it built?"),
                ScriptRule(match=FOLLOWUP_ASK, reply="No"),
                ScriptRule(match=FOLLOWUP_Q, reply="1. Are you sure?"),
                ScriptRule(match=DECIDE, reply="The claim is incorrect."),
            ]
        ),
        name="examiner",
        together=together,
    )


async def run(
    tmp_path: Path, ex: Any, ee: Any, roles: dict[str, RoleSettings] | None = None, **params: Any
) -> Transcript:
    out = tmp_path / "t.jsonl"
    result = await run_protocol(
        CrossExamination(CrossExaminationParams(**params)),
        [CLAIM],
        out=out,
        clients={"examiner": ex, "examinee": ee},
        roles=roles,
    )
    assert not result.errors, result.errors
    return load(out)


SAMPLING = {"examiner": RoleSettings(temperature=0.7), "examinee": RoleSettings(temperature=0.7)}


async def test_majority_examinations_run_at_once_as_branches(tmp_path: Path) -> None:
    ex = slow_examiner(together=3)
    t = await run(tmp_path, ex, examinee(), roles=SAMPLING, examinations=3)
    assert ex.most == 3  # the three setups were in flight together
    s = t.sessions["c1"]
    branched = [e for e in s.events if e.branch is not None]
    assert {e.branch for e in branched} == {"e1", "e2", "e3"}
    # written interleaved, read as one conversation per examination
    order = [e.branch for e in s.events if e.branch is not None]
    assert order != sorted(order)
    grouped = [e.branch for e in reading_order(s.events) if e.branch is not None]
    assert grouped == sorted(grouped)
    assert all(e.stage.startswith(e.branch + ".") for e in branched if e.stage)
    v = s.verdict
    assert v is not None and v.statistics["rejections"] == 3 and v.accepted is False
    # the chat pairs every reply with its call inside its own examination
    chat = chat_of(s, t.header)
    assert len(chat.turns) > 0


async def test_sequential_examinations_when_asked(tmp_path: Path) -> None:
    ex = slow_examiner()
    t = await run(tmp_path, ex, examinee(), roles=SAMPLING, examinations=3, concurrent_examinations=False)
    assert ex.most == 1
    assert all(e.branch is None for e in t.sessions["c1"].events)


async def test_greedy_majority_coalesces_identical_requests(tmp_path: Path) -> None:
    ex, ee = slow_examiner(), examinee()
    t = await run(tmp_path, ex, ee, examinations=3, sampling_temperature=0)
    calls = t.sessions["c1"].of_kind(ModelCall)
    coalesced = [c for c in calls if c.coalesced]
    sent = [c for c in calls if not c.coalesced]
    # the three examinations are identical under greedy decoding: one sends, two are answered by it
    assert len(coalesced) == 2 * len(sent)
    assert all(c.requests == 0 and c.usage.prompt_tokens == 0 for c in coalesced)
    assert len(ex.seen) + len(ee.seen) == len(sent)
    replies = [m for m in t.sessions["c1"].of_kind(Message) if m.receiver == "moderator"]
    assert len(replies) == len(calls)  # every examination still records its own replies


async def test_coalescing_after_the_fact_within_a_session(tmp_path: Path) -> None:
    ex, ee = slow_examiner(), examinee()
    t = await run(tmp_path, ex, ee, examinations=3, sampling_temperature=0, concurrent_examinations=False)
    calls = t.sessions["c1"].of_kind(ModelCall)
    assert sum(c.coalesced for c in calls) == 2 * sum(not c.coalesced for c in calls)


async def test_sampled_requests_are_never_coalesced(tmp_path: Path) -> None:
    ex, ee = slow_examiner(), examinee()
    t = await run(tmp_path, ex, ee, roles=SAMPLING, examinations=3)
    assert not any(c.coalesced for c in t.sessions["c1"].of_kind(ModelCall))
    assert len(ex.seen) + len(ee.seen) == len(t.sessions["c1"].of_kind(ModelCall))


async def test_independent_answers_run_at_once_and_join_the_conversation_in_order(tmp_path: Path) -> None:
    ee = Slow(
        Script(rules=[ScriptRule(match=r"regarding your claim", replies=["Gustave Eiffel.", "In 1889."])]),
        name="examinee",
        together=2,
    )
    t = await run(tmp_path, slow_examiner(), ee, answers="independent")
    assert ee.most == 2
    # both questions were asked from the same conversation (the claim), neither saw the other's answer
    firsts = list(ee.seen)
    assert len(firsts) == 2 and len(firsts[0]) == len(firsts[1])
    s = t.sessions["c1"]
    delivered = next(m for m in s.of_kind(Message) if m.prompt == "cross_examination/followup_ask")
    assert "1. Gustave Eiffel.\n2. In 1889." in delivered.content
    assert {e.branch for e in s.events if e.branch} == {"q1", "q2"}


async def test_coalescing_can_be_turned_off(tmp_path: Path) -> None:
    ex, ee = slow_examiner(), examinee()
    out = tmp_path / "t.jsonl"
    params = CrossExaminationParams(examinations=3, sampling_temperature=0)
    result = await run_protocol(
        CrossExamination(params), [CLAIM], out=out, clients={"examiner": ex, "examinee": ee}, coalesce=False
    )
    assert not result.errors
    calls = load(out).sessions["c1"].of_kind(ModelCall)
    assert not any(c.coalesced for c in calls)
    assert len(ex.seen) + len(ee.seen) == len(calls)
