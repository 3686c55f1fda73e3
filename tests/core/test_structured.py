"""Structured replies: reply schemas, their enforcement per backend, and k samples in one request."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from tests.fake_openai import FakeOpenAIServer
from voirdire.models import RoleSettings, ScriptedChatCompletionClient
from voirdire.replies.schema import ReplySchema
from voirdire.runner import run_protocol
from voirdire.session.ask import Ask
from voirdire.session.machine import StateMachine
from voirdire.session.prompts import PromptLibrary
from voirdire.session.protocol import ParseError, Protocol, Session
from voirdire.transcript import Message, ModelCall, ParseFailure, Verdict, load


class Reason(BaseModel):
    sentence: str
    consistent: bool


class Reasons(BaseModel):
    reasons: list[Reason] = Field(min_length=1)


def test_a_choice_reads_json_a_bare_word_and_a_fenced_block() -> None:
    s = ReplySchema.of(Literal["correct", "incorrect"])
    assert s.validate('{"answer": "incorrect"}') == "incorrect"
    assert s.validate("Correct.") == "correct"
    assert s.validate('```json\n{"answer": "correct"}\n```') == "correct"
    assert s.schema["properties"]["answer"]["enum"] == ["correct", "incorrect"]
    for bad in ("The claim is correct.", '{"answer": "maybe"}', "{not json", ""):
        with pytest.raises(ParseError):
            s.validate(bad)


def test_a_model_schema_names_the_field_that_does_not_fit() -> None:
    s = ReplySchema.of(Reasons)
    assert s.validate('{"reasons": [{"sentence": "a", "consistent": true}]}').reasons[0].consistent is True
    with pytest.raises(ParseError, match=r"Reasons: reasons: List should have at least 1 item"):
        s.validate('{"reasons": []}')
    with pytest.raises(TypeError):
        ReplySchema.of(42)


# ----------------------------------------------------------------------------------------- through a Session

PROMPT = """\
source: test
verbatim: false
note: test
variables: [claim]
messages:
  - role: user
    template: "Is this correct? {claim}"
"""


class Item(BaseModel):
    id: str
    claim: str


class Params(BaseModel):
    samples: int = 1


class Judge(Protocol[Item, Params]):
    name = "judge"
    roles = ("judge",)
    machine = StateMachine.chain("judge", "done")
    Item, Params = Item, Params
    prompt_folder = "judge"

    def item_id(self, item: Item) -> str:
        return item.id

    async def run(self, item: Item, session: Session) -> Verdict:
        session.enter("judge")

        def paper_reader(text: str) -> str:
            if "correct" not in text.lower():
                raise ParseError("no verdict")
            return "incorrect" if "incorrect" in text.lower() else "correct"

        reply = await session.ask(
            "judge",
            "ask",
            Ask(
                parse=paper_reader,
                schema=Literal["correct", "incorrect"],
                samples=self.params.samples,
                on_failure="undecided",
            ),
            claim=item.claim,
        )
        session.enter("done")
        votes = [r.value for r in reply.samples] if reply.samples else [reply.value]
        return session.verdict(str(reply.value), accepted=reply.value == "correct", statistics={"votes": votes})


@pytest.fixture
def prompts(tmp_path: Path) -> PromptLibrary:
    (tmp_path / "prompts" / "judge").mkdir(parents=True)
    (tmp_path / "prompts" / "judge" / "ask.yaml").write_text(PROMPT)
    return PromptLibrary(tmp_path / "prompts")


async def run(
    tmp_path: Path, prompts: PromptLibrary, url: str, *, structured: bool, samples: int = 1, n_items: int = 1
) -> Any:
    out = tmp_path / f"t{structured}{samples}.jsonl"
    settings = RoleSettings(model=f"openai-compatible:fake@{url}", structured=structured)
    items = [Item(id=f"c{i}", claim=f"claim {i}") for i in range(n_items)]
    await run_protocol(
        Judge(Params(samples=samples)), items, out=out, roles={"judge": settings}, prompts=prompts, resume=False
    )
    return load(out)


def json_answer(messages: list[dict[str, Any]]) -> str:
    return '{"answer": "incorrect"}'


async def test_structured_mode_sends_the_schema_and_reads_the_json(tmp_path: Path, prompts: PromptLibrary) -> None:
    with FakeOpenAIServer(json_answer) as server:
        t = await run(tmp_path, prompts, server.url, structured=True)
    body = server.requests[0]
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["properties"]["answer"]["enum"] == ["correct", "incorrect"]
    s = t.sessions["c0"]
    assert s.verdict is not None and s.verdict.decision == "incorrect"
    (call,) = s.of_kind(ModelCall)
    assert call.enforcement == "response_format" and call.requests == 1
    assert t.header is not None and t.header.roles["judge"].structured is True


async def test_paper_mode_sends_no_schema_and_reads_the_text(tmp_path: Path, prompts: PromptLibrary) -> None:
    with FakeOpenAIServer(lambda m: "I think the claim is correct.") as server:
        t = await run(tmp_path, prompts, server.url, structured=False)
    assert "response_format" not in server.requests[0]
    s = t.sessions["c0"]
    assert s.verdict is not None and s.verdict.decision == "correct"
    assert s.of_kind(ModelCall)[0].enforcement is None


async def test_an_endpoint_that_refuses_response_format_is_asked_in_text_once_learnt(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    with FakeOpenAIServer(lambda m: "Incorrect", reject_response_format=True) as server:
        t = await run(tmp_path, prompts, server.url, structured=True, n_items=3)
    assert ["response_format" in b for b in server.requests] == [True, False, False, False]
    calls = [t.sessions[f"c{i}"].of_kind(ModelCall)[0] for i in range(3)]
    assert [c.enforcement for c in calls] == ["text-fallback"] * 3
    assert [c.requests for c in calls] == [2, 1, 1]
    assert all(t.sessions[f"c{i}"].verdict.decision == "incorrect" for i in range(3))  # type: ignore[union-attr]


async def test_eleven_samples_go_out_as_one_request(tmp_path: Path, prompts: PromptLibrary) -> None:
    answers = itertools.cycle(["Correct", "Incorrect", "Correct"])
    with FakeOpenAIServer(lambda m: next(answers)) as server:
        t = await run(tmp_path, prompts, server.url, structured=True, samples=11)
    assert len(server.requests) == 1 and server.requests[0]["n"] == 11
    s = t.sessions["c0"]
    (call,) = s.of_kind(ModelCall)
    assert call.samples == 11 and call.requests == 1
    replies = [e for e in s.of_kind(Message) if e.receiver == "moderator"]
    assert [e.sample for e in replies] == list(range(11))
    assert s.verdict is not None and s.verdict.statistics["votes"].count("correct") == 7


async def test_an_endpoint_that_ignores_n_gets_one_request_per_sample(tmp_path: Path, prompts: PromptLibrary) -> None:
    with FakeOpenAIServer(lambda m: "Correct", honour_n=False) as server:
        t = await run(tmp_path, prompts, server.url, structured=False, samples=11, n_items=2)
    # the first item learns it (1 request with n, 10 without); the second asks once per sample from the start
    assert [b.get("n") for b in server.requests[:2]] == [11, None] and len(server.requests) == 22
    assert all("n" not in b for b in server.requests[11:])
    assert [t.sessions[f"c{i}"].of_kind(ModelCall)[0].requests for i in range(2)] == [11, 11]
    assert all(len([e for e in t.sessions[f"c{i}"].of_kind(Message) if e.sample is not None]) == 11 for i in range(2))


async def test_a_reply_that_does_not_fit_is_a_parse_failure(tmp_path: Path, prompts: PromptLibrary) -> None:
    client = ScriptedChatCompletionClient(["perhaps"])
    out = tmp_path / "t.jsonl"
    await run_protocol(
        Judge(),
        [Item(id="c0", claim="x")],
        out=out,
        roles={"judge": RoleSettings(model="scripted:x", structured=True)},
        clients={"judge": client},
        prompts=prompts,
    )
    s = load(out).sessions["c0"]
    (failure,) = s.of_kind(ParseFailure)
    assert failure.expected == "one of 'correct', 'incorrect'" and failure.outcome == "undecided"
    assert s.of_kind(ModelCall)[0].enforcement == "validated"


async def test_cached_samples_are_kept_apart(tmp_path: Path, prompts: PromptLibrary) -> None:
    answers = itertools.cycle(["Correct", "Incorrect"])
    cache = tmp_path / "cache.jsonl"
    with FakeOpenAIServer(lambda m: next(answers)) as server:
        for _ in range(2):
            out = tmp_path / "t.jsonl"
            await run_protocol(
                Judge(Params(samples=4)),
                [Item(id="c0", claim="x")],
                out=out,
                roles={"judge": RoleSettings(model=f"openai-compatible:fake@{server.url}")},
                prompts=prompts,
                cache=cache,
                resume=False,
            )
            s = load(out).sessions["c0"]
            assert s.verdict is not None and s.verdict.statistics["votes"] == ["correct", "incorrect"] * 2
    assert len(server.requests) == 1  # the second run was served from the cache, sample by sample
    assert len([json.loads(line) for line in cache.read_text().splitlines()]) == 4


@pytest.mark.slow
async def test_the_embedded_model_is_held_to_the_schema_by_a_grammar(tmp_path: Path, prompts: PromptLibrary) -> None:
    pytest.importorskip("llama_cpp")
    out = tmp_path / "t.jsonl"
    items = [Item(id=f"c{i}", claim=c) for i, c in enumerate(["Paris is in France.", "The moon is made of cheese."])]
    await run_protocol(
        Judge(Params(samples=2)),
        items,
        out=out,
        roles={"judge": RoleSettings(model="local", structured=True, max_tokens=32, temperature=0.8, seed=1)},
        prompts=prompts,
    )
    t = load(out)
    for s in t.sessions.values():
        assert s.of_kind(ParseFailure) == []
        (call,) = s.of_kind(ModelCall)
        assert call.enforcement == "grammar" and call.samples == 2 and call.requests == 2
        assert s.verdict is not None and set(s.verdict.statistics["votes"]) <= {"correct", "incorrect"}


class OldStyleJudge(Judge):
    """Passes an option the way ``ask`` took it before ``Ask``: as a keyword beside the prompt's variables."""

    async def run(self, item: Item, session: Session) -> Verdict:
        session.enter("judge")
        await session.ask("judge", "ask", claim=item.claim, seed=7)
        raise AssertionError("not reached")


async def test_an_option_given_as_a_prompt_variable_is_refused_naming_the_request(
    tmp_path: Path, prompts: PromptLibrary
) -> None:
    from voirdire.models import ScriptedChatCompletionClient
    from voirdire.models.scripted import Script, ScriptRule

    client = ScriptedChatCompletionClient(Script(rules=[ScriptRule(match=".", reply="correct")]))
    out = tmp_path / "t.jsonl"
    result = await run_protocol(
        OldStyleJudge(Params()), [Item(id="c0", claim="x")], out=out, clients={"judge": client}, prompts=prompts
    )
    refusal = "TypeError: ask(): seed=... belong to the request, not to the prompt: pass Ask(seed=...)"
    assert result.errors == {"c0": refusal}
    assert client.seen == []  # refused before anything was sent


def test_a_request_draws_at_least_one_sample() -> None:
    assert Ask().samples == 1 and Ask(samples=3).samples == 3
    for bad in (0, -1, 1.5):
        with pytest.raises(ValueError, match="samples must be a whole number >= 1"):
            Ask(samples=bad)  # type: ignore[arg-type]
