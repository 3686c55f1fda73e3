"""What the Session checks before a reply is read (issue 26): a reply that reproduces the prompt's template or example
is a parse failure, and a closed answer cut off at max_tokens is asked again once, then unreadable."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from autogen_core.models import CreateResult, LLMMessage, RequestUsage

from tests.protocols.dcr.helpers import AMC, DCE, RAI, S1, S2_FIXED, SUMMARY, amc, client, item
from voirdire.chat.terminal import render
from voirdire.models import RoleSettings, Script, ScriptedChatCompletionClient, ScriptRule
from voirdire.protocols.cross_examination import ClaimItem, CrossExamination, CrossExaminationParams
from voirdire.protocols.dcr import DCR, DCRParams
from voirdire.replies import echoed
from voirdire.runner import run_protocol
from voirdire.session.prompts import library
from voirdire.session.protocol import fixed_text
from voirdire.transcript import Message, ModelCall, ParseFailure, Step, load

# The paragraph-level evaluator's answer template (DCR Table 11), filled in as printed, and the AMC prompt's own
# worked example (Table 9) returned as the answer.
TEMPLATE_ECHO = (
    '{"reason": {"sentence": "original sentence", "reason": "why this summary is or is not consistent with the '
    "article. You should start with 'This summary is consistent with the article' or 'this summary is not "
    "consistent with the article'\"}, \"is_consistent\": true}"
)
AMC_EXAMPLE = (
    '{"reason": ["The first paragraph is negative as it mentions the attempt answer is wrong. Thus mark -1", "The '
    'second paragraph is negative as it adds something that is not in the true answer. Thus mark -1", "The third '
    'paragraph is positive. Thus mark +1"], "answer": [-1, -1, 1]}'
)


def test_echo_of_a_template_or_example_is_found_and_an_answer_using_the_prompts_words_is_not() -> None:
    paragraph = fixed_text(library().get("dcr/dce_paragraph"))
    converter = fixed_text(library().get("dcr/amc"))
    assert echoed(TEMPLATE_ECHO, paragraph) is not None
    assert echoed(AMC_EXAMPLE, converter) is not None
    answer = {"reason": {"sentence": SUMMARY, "reason": "This summary is consistent with the article."}}
    assert echoed(json.dumps({**answer, "is_consistent": True}), paragraph) is None
    assert echoed('{"reason": ["mark 1"], "answer": [1]}', converter) is None
    # The inputs are not the prompt's own text: a reply that repeats the summary it was given is no echo.
    assert all(SUMMARY not in s for s in paragraph)


async def test_dcr_paragraph_level_evaluator_copying_the_template_is_not_consistent(tmp_path: Path) -> None:
    improver = json.dumps({"sentence": SUMMARY, "improved_summary": f"{S1} {S2_FIXED}", "reason": "fixed"})
    clients = {
        "evaluator": client(DCE, TEMPLATE_ECHO, "evaluator"),
        "converter": client(AMC, amc(1), "converter"),
        "improver": client(RAI, improver, "improver"),
    }
    out = tmp_path / "dcr.jsonl"
    result = await run_protocol(DCR(DCRParams(level="paragraph")), [item()], out=out, clients=clients)
    assert not result.errors, result.errors
    (s,) = load(out).sessions.values()
    assert s.verdict is not None
    assert s.verdict.accepted is not True and s.verdict.decision != "consistent"
    (failure,) = s.of_kind(ParseFailure)
    assert failure.role == "evaluator" and "template or example" in failure.error
    assert not s.of_kind(Message) or all(m.prompt != "dcr/amc" for m in s.of_kind(Message))  # nothing scored


async def test_dcr_converter_returning_the_prompts_example_is_not_scored(tmp_path: Path) -> None:
    reason = {"sentence": SUMMARY, "reason": "This summary is consistent with the article."}
    evaluator = json.dumps({"reason": reason, "is_consistent": True})
    clients = {
        "evaluator": client(DCE, evaluator, "evaluator"),
        "converter": client(AMC, AMC_EXAMPLE, "converter"),
        "improver": client(RAI, "[]", "improver"),
    }
    out = tmp_path / "dcr.jsonl"
    result = await run_protocol(DCR(DCRParams(level="paragraph")), [item()], out=out, clients=clients)
    assert not result.errors, result.errors
    (s,) = load(out).sessions.values()
    assert s.verdict is not None and s.verdict.accepted is not True
    assert any(f.role == "converter" and "template or example" in f.error for f in s.of_kind(ParseFailure))


class CutOff(ScriptedChatCompletionClient):
    """A scripted model that stops at max_tokens (one token a word) and says so (``finish_reason: length``)."""

    def __init__(self, script: Script, name: str) -> None:
        super().__init__(script, name)
        self.budgets: list[int] = []

    async def _complete(self, messages: Sequence[LLMMessage], args: Mapping[str, Any]) -> CreateResult:
        done = await super()._complete(messages, args)
        words = str(done.content).split()
        budget = int(args["max_tokens"])
        self.budgets.append(budget)
        if len(words) <= budget:
            return done
        return CreateResult(
            finish_reason="length",
            content=" ".join(words[:budget]),
            usage=RequestUsage(prompt_tokens=done.usage.prompt_tokens, completion_tokens=budget),
            cached=False,
        )


DECIDE = r"correct or incorrect\?"
LONG_DECISION = (
    "Looking at the answers again, the examinee gave the same year twice and named the same city, and the "
    "design matches what is known, so weighing all of this together I conclude that the claim is correct."
)


def examiner(decision: str) -> CutOff:
    rules = [
        ScriptRule(match=r"verify the correctness of the following claim", reply="1. Who designed it?"),
        ScriptRule(match=r"Do you have any follow-up questions", reply="No"),
        ScriptRule(match=DECIDE, reply=decision),
    ]
    return CutOff(Script(rules=rules), "examiner")


def examinee() -> ScriptedChatCompletionClient:
    rules = [ScriptRule(match=r"regarding your claim", reply="Gustave Eiffel's company built it in 1889.")]
    return ScriptedChatCompletionClient(Script(rules=rules), name="examinee")


async def _lmvlm(tmp_path: Path, ex: CutOff, max_tokens: int) -> Any:
    out = tmp_path / "t.jsonl"
    claim = ClaimItem(id="c1", claim="The Eiffel Tower is in Paris.", answers=["Paris"])
    result = await run_protocol(
        CrossExamination(CrossExaminationParams()),
        [claim],
        out=out,
        clients={"examiner": ex, "examinee": examinee()},
        roles={"examiner": RoleSettings(max_tokens=max_tokens)},
    )
    assert not result.errors, result.errors
    return load(out)


async def test_a_decision_cut_off_is_asked_again_with_twice_the_budget_and_read_when_complete(tmp_path: Path) -> None:
    ex = examiner(LONG_DECISION)  # 36 words: cut at 20, complete at 40
    t = await _lmvlm(tmp_path, ex, max_tokens=20)
    (s,) = t.sessions.values()
    assert ex.budgets[-2:] == [20, 40]
    calls = [c for c in s.of_kind(ModelCall) if c.role == "examiner"]
    assert [c.finish_reason for c in calls[-2:]] == ["length", "stop"]
    (step,) = [e for e in s.of_kind(Step) if e.name == "reasked"]
    assert step.data["max_tokens"] == 40 and step.data["role"] == "examiner"
    assert s.verdict is not None and s.verdict.decision == "correct"
    assert not any("cut off" in line for line in s.verdict.evidence)
    assert "cut off at the token limit" in render(t)  # the first, cut-off reply is shown as such


async def test_a_decision_cut_off_twice_is_unreadable_and_said_so(tmp_path: Path) -> None:
    ex = examiner(LONG_DECISION)
    t = await _lmvlm(tmp_path, ex, max_tokens=8)  # cut at 8 words, then again at 16
    (s,) = t.sessions.values()
    assert ex.budgets[-2:] == [8, 16]
    failures = [f for f in s.of_kind(ParseFailure) if f.role == "examiner"]
    assert failures and "cut off at max_tokens twice" in failures[-1].error
    assert s.verdict is not None and s.verdict.decision not in ("correct", "incorrect")  # not read as an answer
    assert any(line.startswith("cut off: examiner's reply") for line in s.verdict.evidence)
    shown = render(t)
    assert "cut off at the token limit" in shown and "cut off at max_tokens twice" in shown
