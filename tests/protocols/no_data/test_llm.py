"""The LLM evaluator (App. D.2 prompts) as a model role through the Session: anchor parsing, the prompt files and
their exemplars, a perfect and a scripted model, unparseable replies with their defined outcome, and an
OpenAI-compatible endpoint bound by ``--model`` (fake server)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from autogen_core.models import CreateResult, LLMMessage, RequestUsage

from tests.fake_openai import FakeOpenAIServer
from voirdire.cli import main
from voirdire.models import Script, ScriptedChatCompletionClient, ScriptRule
from voirdire.models.base import TextOnlyClient, text_of
from voirdire.protocols.no_data.data import load_split
from voirdire.protocols.no_data.llm import LLMEvaluator, format_exemplars, parse_datapoint, parse_label
from voirdire.protocols.no_data.protocol import NoDataProtocol, NoDataProtocolParams, make_items
from voirdire.protocols.no_data.report import decision_of
from voirdire.protocols.no_data.rubric import IP_RUBRIC
from voirdire.runner import run_in_memory, run_protocol
from voirdire.session.prompts import PromptLibrary
from voirdire.transcript import Message, ModelCall, ParseFailure, Step, load

GOOD_LABEL = "|reasons|\nc0: 1\n|reasons|\n|label|\n1\n|label|"
LIBRARY = PromptLibrary()
rng = np.random.default_rng(3)
XS = ["".join(map(str, rng.integers(0, 2, 12))) for _ in range(20)]
POOL = ["".join(map(str, rng.integers(0, 2, 12))) for _ in range(300)]


@pytest.fixture
def root(shared_data: Path) -> Path:
    return shared_data / "no_data_algorithm"


class FunctionClient(TextOnlyClient):
    """A model that answers ``reply(system, user)``; every request is kept in ``calls``."""

    def __init__(self, reply: Callable[[str, str], str]) -> None:
        super().__init__()
        self.reply = reply
        self.calls: list[tuple[str, str]] = []

    async def _complete(self, messages: Sequence[LLMMessage], args: Mapping[str, Any]) -> CreateResult:
        system, user = text_of(messages[0]), text_of(messages[-1])
        self.calls.append((system, user))
        text = self.reply(system, user)
        usage = RequestUsage(prompt_tokens=0, completion_tokens=0)
        return CreateResult(finish_reason="stop", content=text, usage=usage, cached=False)


def perfect(system: str, user: str) -> str:
    """Answers the App. D.2 prompts like a model that knows the IP rubric."""
    x = re.findall(r"Datapoint: ([01]+)", user)[-1]  # after the exemplars, if any
    if system.startswith("You are labelling binary strings"):
        return f"|reasons|\n{IP_RUBRIC.explain(x)}\n|reasons|\n|label|\n{IP_RUBRIC.label(x)}\n|label|"
    if "# Datapoints:" in system:
        candidates = system.split("# Datapoints:")[1].split("Return your rationale")[0].split()
        assert len(candidates) == 5
        match = [c for c in candidates if IP_RUBRIC.evaluate_total(c) == IP_RUBRIC.evaluate_total(x)]
        return f"The first matching one.\n|datapoint|\n{match[0]}\n|datapoint|"
    return f"I keep it.\n|datapoint|\n{x}\n|datapoint|"


def test_parse_label():
    assert parse_label("|reasons|\n- c0: 1\n|reasons|\n|label|\n1\n|label|") == 1
    assert parse_label("|label| (0) |label|") == 0
    # Two different labels say both: refused, and App. D.2 asks again (issue 8; "the last one wins" read 1).
    assert parse_label("|label|\n0\n|label| then |label|\n1\n|label|") is None
    assert parse_label("|label|\n1\n|label|\n|label|\n1\n|label|") == 1
    assert parse_label("|label|\n1") == 1  # unterminated anchor, as small models write it
    # Without anchors, a label named as a person reads it (issue 26); a bare number names no label.
    assert parse_label("the label is 1") == 1
    assert parse_label("Label: 0") == 0
    assert parse_label('{"label": 0}') == 0
    assert parse_label("1") is None
    assert parse_label("The answer is: 1") is None
    assert parse_label("|label| 0 or 1 |label|") is None  # earlier read as 0
    # The few-shot pattern carried on after the answer: the invented datapoint's label is not ours.
    x, other = "011010000100", "010010001011"
    reply = f"|label|\n1\n|label|\n\nDatapoint: {other}\n|label|\n0\n|label|"
    assert parse_label(reply, x) == 1 and parse_label(reply) is None
    assert parse_label(f"Datapoint: {other}\n|label|\n1\n|label|\nDatapoint: {x}\n|label|\n0\n|label|", x) == 0


def test_parse_datapoint():
    reply = "Rationale...\n|datapoint|\n010101010101\n|datapoint|"
    assert parse_datapoint(reply) == "010101010101"
    assert parse_datapoint(reply, 12) == "010101010101"
    assert parse_datapoint(reply, 8) is None
    assert parse_datapoint("|datapoint|\n01x1\n|datapoint|") is None
    assert parse_datapoint("no anchors 0101") is None
    assert parse_datapoint("|datapoint|\n010101010101\n|datapoint|\n|datapoint|\n110011010001\n|datapoint|") is None
    assert (
        parse_datapoint("|datapoint| 0100 |datapoint| then |datapoint| 010101010101 |datapoint|", 12) == "010101010101"
    )


@pytest.mark.parametrize("strategy", ["pick", "generate"])
async def test_llm_evaluator_runs_twenty_datapoints(root: Path, strategy: str) -> None:
    model = FunctionClient(perfect)
    params = NoDataProtocolParams(evaluator="llm", llm_generation=strategy, rounds=3)
    items = make_items(load_split("ip", "test", root), [0], limit=20)
    verdicts, writer = await run_in_memory(
        NoDataProtocol(params, root=root), items, clients={"evaluator": model}, keep=True
    )
    assert all(v.accepted for v in verdicts)
    assert [decision_of(v).label for v in verdicts] == [IP_RUBRIC.label(it.x) for it in items]
    assert len([r for r in writer.records if isinstance(r, Step) and r.name == "nodata.round"]) == 60
    prompts = {m.prompt for m in writer.records if isinstance(m, Message) and m.sender == "moderator"}
    assert prompts == {"no_data/evaluate", "no_data/generate_pick" if strategy == "pick" else "no_data/generate"}
    # A label and a proposal per round, re-labelled every round as in §8; at temperature 0 a re-label is the same
    # request as the label before it, so the session answers it without sending it again (coalesced).
    calls = [r for r in writer.records if isinstance(r, ModelCall)]
    assert len(calls) == 120 and sum(c.coalesced for c in calls) >= 40
    assert len(model.calls) == 120 - sum(c.coalesced for c in calls)


async def test_unparseable_replies_fall_back_to_random_after_five_attempts(root: Path) -> None:
    model = FunctionClient(lambda system, user: "I am not sure.")
    params = NoDataProtocolParams(evaluator="llm", rounds=1)
    items = make_items(load_split("ip", "test", root), [0], limit=1)
    (verdict,), writer = await run_in_memory(
        NoDataProtocol(params, root=root), items, clients={"evaluator": model}, keep=True
    )
    (round_,) = [r.data for r in writer.records if isinstance(r, Step) and r.name == "nodata.round"]
    assert round_["y_hat"] in (0, 1) and len(round_["x_prime"]) == 12 and set(round_["x_prime"]) <= {"0", "1"}
    failures = [r for r in writer.records if isinstance(r, ParseFailure)]
    assert len(model.calls) == 10 and len(failures) == 10 == verdict.statistics["parse_failures"]
    assert failures[4].outcome == "gave up after 5 attempts: a random label (App. D.2)"
    assert failures[9].outcome == "gave up after 5 attempts: a random x' (App. D.2)"


def test_exemplars_follow_prompt_1_answer_format():
    text = format_exemplars([("011111100000", 1)])
    assert parse_label(text) == 1 and "c1a" in text and text.startswith("Datapoint: 011111100000")


@pytest.mark.parametrize(("name", "number"), [("evaluate", 1), ("generate_pick", 2), ("generate", 3)])
def test_prompt_files_are_verbatim_from_the_paper(shared_data, name, number):
    paper = (shared_data.parent / "papers" / "no-data-algorithm.txt").read_text(encoding="utf-8")
    prompt = LIBRARY.get(f"no_data/{name}")
    assert prompt.spec.verbatim and f"Prompt {number}" in prompt.spec.source
    system = prompt.spec.messages[0]
    assert system.role == "system"
    flat = re.sub(r"\s+", " ", paper)
    for line in system.template.splitlines():
        if "{" in line or not line.strip():
            continue  # the markers the paper leaves for the rubric / datapoints
        assert re.sub(r"\s+", " ", line.strip()) in flat, line


def test_prompt_3_takes_the_first_exemplars_with_rationale_and_answer():
    """App. D.2, Prompt 3 caption: "this prompt does take exemplars (not pictured): the first five entries in the
    training dataset, along with chain-of-thought-style rationale" (Prompt 2 "does not utilise exemplars")."""
    rows = [(x, IP_RUBRIC.label(x)) for x in POOL[:5]]
    x = XS[0]
    seen = {}
    for strategy in ("generate", "pick"):
        prompt, variables = LLMEvaluator(exemplars=rows, pool=POOL, strategy=strategy).proposal_request(x, 1, rng)
        user = LIBRARY.get(f"no_data/{prompt}").render(**variables)[-1].content
        if prompt == "generate":
            assert user.endswith(f"Datapoint: {x}\nLabel: 1\n")
        seen[prompt] = variables
    assert "exemplars" not in seen["generate_pick"]
    text = seen["generate"]["exemplars"]
    blocks = text.strip().split("\n\n")
    assert len(blocks) == 5
    for block, (ex, ey) in zip(blocks, rows, strict=True):
        assert block.startswith(f"Datapoint: {ex}\nLabel: {ey}\nRationale:\n")
        assert "c1a" in block and "c1b" in block  # criterion-by-criterion, over the total rubric
        answer = parse_datapoint(block, 12)
        assert answer is not None and answer != ex
        assert IP_RUBRIC.evaluate_total(answer) == IP_RUBRIC.evaluate_total(ex)  # a good answer to copy
    # Bounded by the evaluator's exemplars setting; none at all leaves the slot empty.
    _, variables = LLMEvaluator(exemplars=rows[:2], pool=POOL, strategy="generate").proposal_request(x, 0, rng)
    assert variables["exemplars"].count("|datapoint|") == 4
    _, variables = LLMEvaluator(pool=POOL, strategy="generate").proposal_request(x, 0, rng)
    assert variables["exemplars"] == ""


async def test_scripted_llm_through_the_session_with_unparseable_proposals(root: Path, tmp_path: Path) -> None:
    # Prompt 1 gets a well-formed "1"; Prompt 2 (pick a datapoint) never gets an anchored answer.
    script = Script(
        rules=[
            ScriptRule(match=r"Label: [01]\s*$", reply="I would pick the second one."),
            ScriptRule(match=r"Datapoint: [01]+\s*$", reply=GOOD_LABEL),
        ]
    )
    client = ScriptedChatCompletionClient(script)
    params = NoDataProtocolParams(data="ip", evaluator="llm", generator="llm", phi=1.0, exemplars=2)
    proto = NoDataProtocol(params, root=root)
    data = load_split("ip", "test", root)
    items = make_items(data, [0], limit=4)
    out = tmp_path / "llm.jsonl"
    result = await run_protocol(proto, items, out=out, clients={"evaluator": client})
    assert not result.errors and len(result.verdicts) == 4
    t = load(out)
    assert t.header is not None and t.header.roles["evaluator"].spec == "client:ScriptedChatCompletionClient"
    for item in items:
        s = t.sessions[proto.item_id(item)]
        decision = decision_of(s.verdict)
        rounds = [e.data for e in s.of_kind(Step) if e.name == "nodata.round"]
        assert len(rounds) == decision.rounds_run
        failures = s.of_kind(ParseFailure)
        # Five attempts per proposal (App. D.2), then a random x'; labels parsed at the first attempt.
        assert len(failures) == 5 * len(rounds)
        assert all(f.prompt == "no_data/generate_pick" and f.role == "evaluator" for f in failures)
        assert [f.outcome for f in failures[:5]] == [
            *(f"asked again at temperature 0.7 (attempt {k} of 5)" for k in range(2, 6)),
            "gave up after 5 attempts: a random x' (App. D.2)",
        ]
        assert all(r["y_hat"] == 1 and r["strategy"] == "llm-pick" for r in rounds)
        calls = s.of_kind(ModelCall)
        assert len(calls) == 6 * len(rounds) == s.verdict.statistics["model_calls"]
        assert s.verdict.statistics["parse_failures"] == len(failures)
        # φ = 1: a failed datapoint's revealed label 1 is flipped to 0.
        assert decision.label == (1 if decision.success else 0) and decision.revealed == 1
        # The commitment still goes to the rule verifier through the Session.
        assert len([m for m in s.of_kind(Message) if m.receiver == "verifier"]) == len(rounds)
    # Every App. D.2 call is a fresh conversation (system + user), retries included.
    assert all(len(messages) == 2 for messages in client.seen)
    sent = [c for s in t.sessions.values() for c in s.of_kind(ModelCall) if not c.coalesced]
    assert len(sent) == len(client.seen)


async def test_unparseable_label_falls_back_to_a_random_label(root: Path, tmp_path: Path) -> None:
    client = ScriptedChatCompletionClient(Script(default="no idea"))
    params = NoDataProtocolParams(data="ip", evaluator="llm", generator="oracle", retry_temperature=None, attempts=3)
    proto = NoDataProtocol(params, root=root)
    assert proto.required_roles() == ("evaluator", "verifier", "generator")
    items = make_items(load_split("ip", "test", root), [1], limit=3)
    result = await run_protocol(proto, items, out=tmp_path / "l.jsonl", clients={"evaluator": client})
    assert not result.errors
    t = load(tmp_path / "l.jsonl")
    for s in t.sessions.values():
        failures = s.of_kind(ParseFailure)
        rounds = s.verdict.statistics["rounds_run"]
        assert len(failures) == 3 * rounds and all(f.prompt == "no_data/evaluate" for f in failures)
        assert failures[0].outcome == "asked again (attempt 2 of 3)"
        assert failures[2].outcome == "gave up after 3 attempts: a random label (App. D.2)"
        # The oracle generator is a rule agent on the generator role; the LLM only labels.
        assert {m.sender for m in s.of_kind(Message) if '"x_prime"' in m.content} == {"generator", "evaluator"}
        assert s.verdict.statistics["rounds_run"] >= 1 and s.verdict.decision in ("label 0", "label 1")
        assert s.verdict.accepted  # the oracle matches C̄(x) on IP whatever the (random) label


def _answer(messages: list[dict[str, Any]], state: dict[str, int]) -> str:
    """A perfect model for the App. D.2 prompts — except that its first reply is unreadable."""
    system, user = messages[0]["content"], messages[-1]["content"]
    state["n"] += 1
    if state["n"] == 1:
        return "Let me think about the rubric first."
    x_bits = re.findall(r"Datapoint: ([01]+)", user)[-1]  # after the exemplars, if any
    if system.startswith("You are labelling binary strings"):
        return f"|reasons|\n{IP_RUBRIC.explain(x_bits)}\n|reasons|\n|label|\n{IP_RUBRIC.label(x_bits)}\n|label|"
    candidates = system.split("# Datapoints:")[1].split("Return your rationale")[0].split()
    match = next(c for c in candidates if IP_RUBRIC.evaluate_total(c) == IP_RUBRIC.evaluate_total(x_bits))
    return f"This one matches every criterion.\n|datapoint|\n{match}\n|datapoint|"


def test_cli_llm_evaluator_on_an_openai_compatible_endpoint(root: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("VOIRDIRE_NO_DATA_DIR", str(root))
    state = {"n": 0}
    out = tmp_path / "fake.jsonl"
    with FakeOpenAIServer(lambda messages: _answer(messages, state)) as server:
        args = [
            "nodata",
            "--data",
            "ip",
            "--evaluator",
            "llm",
            "--limit",
            "4",
            "--rounds",
            "2",
            "--seed",
            "3",
            "--model",
            f"evaluator=openai-compatible:fake-model@{server.url}",
            "--max-tokens",
            "64",
            "--concurrency",
            "1",  # one session at a time: the requests are read in order (greedy, then its sampled retry)
            "--out",
            str(out),
            "--json",
        ]
        assert main(args) == 0
        payload = json.loads(capsys.readouterr().out)
        requests = list(server.requests)
        # Resume: the same command runs nothing again.
        assert main(args) == 0
        assert json.loads(capsys.readouterr().out)["skipped"] == 4 and len(server.requests) == len(requests)
    (run,) = payload["runs"]
    assert run["seed"] == 3 and run["n"] == 4
    assert run["success_rate"] == 1.0 and run["accuracy"] == 1.0 and run["flip_rate"] == 0.0
    assert run["known_accuracy"] is None  # only the decision tree has a "known" column
    # Every request the endpoint saw is a recorded call; the re-labels of round 2 that are the same greedy request
    # as a label of round 1 are answered without one (coalesced).
    calls = [c for s in load(out).sessions.values() for c in s.of_kind(ModelCall)]
    assert sum(c.coalesced for c in calls) > 0
    assert len(requests) == sum(c.requests + c.retries for c in calls)
    assert all(r["model"] == "fake-model" and r["max_tokens"] == 64 for r in requests)
    assert all(len(r["messages"]) == 2 and r["messages"][0]["role"] == "system" for r in requests)
    assert requests[0]["temperature"] == 0.0 and requests[1]["temperature"] == 0.7  # greedy first, sampled retry
    assert "seed" not in requests[0]  # --seed is Algorithm 1's, not the model's
    t = load(out)
    assert t.header is not None and t.header.roles["evaluator"].spec.startswith("openai-compatible:fake-model@")
    # The endpoint's one unparseable reply; a later identical greedy request of its session (the re-label of the
    # next round) is answered by that same reply, and read the same way.
    failures = [f for s in t.sessions.values() for f in s.of_kind(ParseFailure)]
    assert failures and {(f.raw, f.outcome) for f in failures} == {
        (failures[0].raw, "asked again at temperature 0.7 (attempt 2 of 5)")
    }
    assert len({f.session_id for f in failures}) == 1
    assert {c.model for s in t.sessions.values() for c in s.of_kind(ModelCall)} == {
        f"openai-compatible:fake-model@{server.url}"
    }


async def test_sampled_retries_carry_distinct_reproducible_seeds(root: Path, tmp_path: Path) -> None:
    seen: list[list[Any]] = []

    def run_args() -> ScriptedChatCompletionClient:
        client = ScriptedChatCompletionClient(Script(default="no idea"))
        original = client._complete
        args_of_run: list[Any] = []
        seen.append(args_of_run)

        async def spy(messages, args):  # type: ignore[no-untyped-def]
            args_of_run.append((args.get("temperature"), args.get("seed")))
            return await original(messages, args)

        client._complete = spy  # type: ignore[method-assign]
        return client

    params = NoDataProtocolParams(data="ip", evaluator="llm", generator="oracle", attempts=3)
    items = make_items(load_split("ip", "test", root), [0], limit=1)
    for k in range(2):
        await run_protocol(
            NoDataProtocol(params, root=root), items, out=tmp_path / f"{k}.jsonl", clients={"evaluator": run_args()}
        )
    first, second = seen
    retries = [a for a in first if a[0] == 0.7]
    assert retries and all(seed is not None for _, seed in retries)
    assert len({seed for _, seed in retries}) == len(retries)  # each attempt samples differently
    assert first == second  # and a re-run samples the same way
    assert all(seed is None for t, seed in first if t is None)  # first attempts stay greedy and unseeded


async def test_prompt_3_exemplars_are_the_first_ip_train_rows(root: Path, tmp_path: Path) -> None:
    """``--llm-generation generate --exemplars 3``: Prompt 3 carries the first three IP-train rows (App. D.2)."""
    client = ScriptedChatCompletionClient(
        Script(
            rules=[
                ScriptRule(match=r"Label: [01]\s*$", reply="|datapoint|\n000000000000\n|datapoint|"),
                ScriptRule(match=r"Datapoint: [01]+\s*$", reply=GOOD_LABEL),
            ]
        )
    )
    params = NoDataProtocolParams(
        data="ip", evaluator="llm", generator="llm", llm_generation="generate", exemplars=3, rounds=1
    )
    items = make_items(load_split("ip", "test", root), [0], limit=1)
    out = tmp_path / "g.jsonl"
    result = await run_protocol(NoDataProtocol(params, root=root), items, out=out, clients={"evaluator": client})
    assert not result.errors
    (s,) = load(out).sessions.values()
    (user,) = [m for m in s.of_kind(Message) if m.prompt == "no_data/generate" and m.sender == "moderator"]
    train = load_split("ip", "train", root).rows
    for row in train[:3]:
        assert f"Datapoint: {row.x}\nLabel: {row.y}\nRationale:" in user.content
    assert f"Datapoint: {train[3].x}\nLabel:" not in user.content
    assert user.content.count("|datapoint|") == 6


async def test_structured_mode_reads_the_label_and_the_pick_from_their_schemas(root: Path, tmp_path: Path) -> None:
    """--structured: Prompt 1's label is asked through a 0/1 reply schema and Prompt 2's x' through a choice of its
    candidates; |label| and |datapoint| anchors are not read then."""
    from voirdire.models import RoleSettings

    def answer(system: str, user: str) -> str:
        if system.startswith("You are labelling binary strings"):
            return '{"answer": "1"}'
        return json.dumps({"answer": system.split("# Datapoints:")[1].split()[0]})

    client = FunctionClient(answer)
    params = NoDataProtocolParams(data="ip", evaluator="llm", generator="llm", retry_temperature=None, attempts=2)
    items = make_items(load_split("ip", "test", root), [1], limit=2)
    out = tmp_path / "s.jsonl"
    roles = {"evaluator": RoleSettings(model="scripted:x", structured=True)}
    result = await run_protocol(
        NoDataProtocol(params, root=root), items, out=out, roles=roles, clients={"evaluator": client}
    )
    assert not result.errors
    t = load(out)
    assert t.header is not None and t.header.roles["evaluator"].structured
    for s in t.sessions.values():
        assert s.of_kind(ParseFailure) == []
        assert {c.enforcement for c in s.of_kind(ModelCall)} == {"validated"}
        rounds = [e.data for e in s.of_kind(Step) if e.name == "nodata.round"]
        assert rounds and all(r["y_hat"] == 1 for r in rounds)
        assert all(r["strategy"] == "llm-pick" and len(r["x_prime"]) == len(r["x"]) for r in rounds)
