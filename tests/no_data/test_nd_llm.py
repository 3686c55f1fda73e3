"""LLM evaluator/generator through a scripted model role, and the App. D.2 prompt files."""

from __future__ import annotations

import re

import numpy as np
import pytest

from voirdire.prompts import PromptLibrary
from voirdire.protocols.no_data.algorithm import EVENT_ROUND, NoDataParams, no_data_algorithm
from voirdire.protocols.no_data.challenges import RuleVerifier
from voirdire.protocols.no_data.llm import (
    EVENT_PARSE_FAILURE,
    LLMEvaluator,
    format_exemplars,
    parse_datapoint,
    parse_label,
)
from voirdire.protocols.no_data.rubric import IP_RUBRIC

rng = np.random.default_rng(3)
XS = ["".join(map(str, rng.integers(0, 2, 12))) for _ in range(20)]
POOL = ["".join(map(str, rng.integers(0, 2, 12))) for _ in range(300)]
LIBRARY = PromptLibrary()


def test_parse_label():
    assert parse_label("|reasons|\n- c0: 1\n|reasons|\n|label|\n1\n|label|") == 1
    assert parse_label("|label| (0) |label|") == 0
    assert parse_label("|label|\n0\n|label| then |label|\n1\n|label|") == 1
    assert parse_label("|label|\n1") == 1  # unterminated anchor, as small models write it
    assert parse_label("the label is 1") is None


def test_parse_datapoint():
    reply = "Rationale...\n|datapoint|\n010101010101\n|datapoint|"
    assert parse_datapoint(reply) == "010101010101"
    assert parse_datapoint(reply, 12) == "010101010101"
    assert parse_datapoint(reply, 8) is None
    assert parse_datapoint("|datapoint|\n01x1\n|datapoint|") is None
    assert parse_datapoint("no anchors 0101") is None


class ScriptedModel:
    """Renders the real prompt file (so variables must match it) and answers like a perfect model."""

    def __init__(self, garbage: bool = False) -> None:
        self.calls: list[tuple[str, str]] = []
        self.garbage = garbage

    async def __call__(self, role: str, prompt: str, variables: dict[str, str]) -> str:
        messages = LIBRARY.get(f"no_data/{prompt}").render(**variables)
        self.calls.append((role, prompt))
        if self.garbage:
            return "I am not sure."
        assert messages[0].role == "system" and variables["rubric"] in messages[0].content
        x = variables["x"]
        if prompt == "evaluate":
            return f"|reasons|\n{IP_RUBRIC.explain(x)}\n|reasons|\n|label|\n{IP_RUBRIC.label(x)}\n|label|"
        if prompt == "generate_pick":
            candidates = variables["datapoints"].splitlines()
            assert len(candidates) == 5
            match = [c for c in candidates if IP_RUBRIC.evaluate_total(c) == IP_RUBRIC.evaluate_total(x)]
            return f"The first matching one.\n|datapoint|\n{match[0]}\n|datapoint|"
        return f"I keep it.\n|datapoint|\n{x}\n|datapoint|"


@pytest.mark.parametrize("strategy", ["pick", "generate"])
async def test_llm_evaluator_runs_twenty_datapoints(strategy):
    model = ScriptedModel()
    events: list[tuple[str, dict]] = []
    evaluator = LLMEvaluator(
        model, exemplars=[(x, IP_RUBRIC.label(x)) for x in POOL[:5]], pool=POOL, strategy=strategy, role="evaluator"
    )
    run = await no_data_algorithm(
        XS, evaluator, RuleVerifier(IP_RUBRIC), NoDataParams(rounds=3), on_event=lambda k, d: events.append((k, d))
    )
    assert run.success_rate == 1.0
    assert run.predictions == [IP_RUBRIC.label(x) for x in XS]
    assert len([e for e in events if e[0] == EVENT_ROUND]) == 60
    assert {p for _, p in model.calls} == {"evaluate", "generate_pick" if strategy == "pick" else "generate"}
    assert len(model.calls) == 120  # a label and a proposal per round, re-labelled every round as in §8


async def test_unparseable_replies_fall_back_to_random_after_five_attempts():
    model = ScriptedModel(garbage=True)
    failures: list[dict] = []

    def on_event(kind: str, data: dict) -> None:
        if kind == EVENT_PARSE_FAILURE:
            failures.append(data)

    evaluator = LLMEvaluator(model, pool=POOL, on_event=on_event)
    y = await evaluator.label(XS[0], 0, np.random.default_rng(0))
    proposal = await evaluator.propose(XS[0], y, 0, np.random.default_rng(0))
    assert y in (0, 1)
    assert len(proposal.x_prime) == 12 and set(proposal.x_prime) <= {"0", "1"}
    assert "random string" in proposal.rationale
    assert len(model.calls) == 10 and len(failures) == 10


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


async def test_prompt_3_takes_the_first_exemplars_with_rationale_and_answer():
    """App. D.2, Prompt 3 caption: "this prompt does take exemplars (not pictured): the first five entries in the
    training dataset, along with chain-of-thought-style rationale" (Prompt 2 "does not utilise exemplars")."""
    seen: dict[str, dict[str, str]] = {}

    async def ask(role: str, prompt: str, variables: dict[str, str]) -> str:
        seen[prompt] = variables
        user = LIBRARY.get(f"no_data/{prompt}").render(**variables)[-1].content
        if prompt == "generate":
            assert user.endswith(f"Datapoint: {variables['x']}\nLabel: {variables['y']}\n")
        return f"|datapoint|\n{variables['x']}\n|datapoint|"

    rows = [(x, IP_RUBRIC.label(x)) for x in POOL[:5]]
    x = XS[0]
    for strategy in ("generate", "pick"):
        await LLMEvaluator(ask, exemplars=rows, pool=POOL, strategy=strategy).propose(x, 1, 0, rng)
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
    seen.clear()
    await LLMEvaluator(ask, exemplars=rows[:2], pool=POOL, strategy="generate").propose(x, 0, 0, rng)
    assert seen["generate"]["exemplars"].count("|datapoint|") == 4
    await LLMEvaluator(ask, pool=POOL, strategy="generate").propose(x, 0, 0, rng)
    assert seen["generate"]["exemplars"] == ""
