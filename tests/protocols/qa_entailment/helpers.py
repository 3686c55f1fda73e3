"""Fake evaluator models for the QA entailment protocol and CLI tests.

``evaluator_script`` answers the paper's prompts by regex rules over the rendered prompt (``voirdire.models.Script``):
QA2D turns each known answer into ``"<answer> wrote the novel Dracula."``; the entailment test replies "Entailment"
for pairs in a given relation (and identical statements), else "neutral"; the Table 17 prompts get fixed replies.
``PromptModel`` decodes each request back into (prompt name, variables, earlier exchanges) for a Python function to
answer; ``rule_based_evaluator`` stands in for an evaluator behind an OpenAI-compatible endpoint.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from autogen_core.models import AssistantMessage, CreateResult, LLMMessage, RequestUsage

from voirdire.models import Script, ScriptRule
from voirdire.models.base import TextOnlyClient, text_of
from voirdire.protocols.qa_entailment.hierarchy import HierarchyCell

QUESTION = "who wrote the novel dracula"
GOLD = "Bram Stoker"
EXPLANATION = "1. Bram Stoker wrote Dracula.\n2. Bram Stoker was Irish. [[INFO]]\n3. So an Irish writer wrote it."

# System answer -> (pairs "X entails Y" among answers, the cell that follows against the gold answer).
CELLS: dict[HierarchyCell, tuple[str, set[tuple[str, str]]]] = {
    HierarchyCell.SUP_ONLY: ("Bram Stoker, in 1897", {("Bram Stoker, in 1897", GOLD)}),
    HierarchyCell.BOTH: (GOLD, set()),
    HierarchyCell.INF_ONLY: ("an Irish writer", {(GOLD, "an Irish writer")}),
    HierarchyCell.NEITHER: ("Mary Shelley", set()),
}


def statement(answer: str) -> str:
    return f"{answer} wrote the novel Dracula."


def qa2d_pattern(answer: str) -> str:
    return rf"A: {re.escape(answer)}\s*S:\s*$"


def entailment_pattern(premise_answer: str, hypothesis_answer: str) -> str:
    return (
        rf"Premise: {re.escape(statement(premise_answer))}\s*"
        rf"Hypothesis: {re.escape(statement(hypothesis_answer))}\s*Is it entailment"
    )


def evaluator_script(
    answers: Iterable[str],
    entails: set[tuple[str, str]],
    *,
    golds: Iterable[str] = (GOLD,),
    first: Mapping[str, str] | None = None,
    explanation: str = EXPLANATION,
    difficulty: str = "2",
    closeness: str = "4",
) -> Script:
    """``first`` maps a regex to a reply tried before everything else (e.g. a malformed reply)."""
    golds = list(golds)
    answers = list(dict.fromkeys([*answers, *golds]))
    rules = [ScriptRule(match=p, reply=r) for p, r in (first or {}).items()]
    rules += [ScriptRule(match=qa2d_pattern(a), reply=f"S: {statement(a)}") for a in answers]
    for a in answers:
        for g in golds:
            for p, h in ((a, g), (g, a)):
                label = "Entailment" if p == h or (p, h) in entails else "neutral"
                rules.append(ScriptRule(match=entailment_pattern(p, h), reply=label))
    rules += [
        ScriptRule(match="list the reasoning process step by step", reply=explanation),
        ScriptRule(match="rate how hard it is to deduce S2 from S1", reply=difficulty),
        ScriptRule(match="Simply give a score from 1 to 5", reply=closeness),
    ]
    return Script(rules=rules)


# One earlier exchange of a conversation: (prompt name, its variables, the reply the model gave to it).
Exchange = tuple[str, dict[str, str], str]
Reply = Callable[[str, str, dict[str, str], list[Exchange]], str]  # (role, prompt, variables, context) -> reply

_PROMPTS: list[tuple[str, str, re.Pattern[str]]] = [
    ("qa2d", "Convert a question answer pair", re.compile(r"Q: (?P<question>[^\n]*)\nA: (?P<answer>[^\n]*)\nS:\s*$")),
    (
        "entailment",
        "premise entails",
        re.compile(r"Premise: (?P<premise>[^\n]*)\nHypothesis: (?P<hypothesis>[^\n]*)\n"),
    ),
    ("inference_explanation", "list the reasoning process", re.compile(r"S1: (?P<s1>[^\n]*)\n\nS2: (?P<s2>[^\n]*)\n")),
    ("inference_score", "rate how hard it is", re.compile(r"")),
    (
        "llm_score",
        "Simply give a score from 1 to 5",
        re.compile(
            r"Question: (?P<question>[^\n]*)\nGolden answers: (?P<golden_answers>[^\n]*)"
            r"\nAI answer: (?P<system_answer>.*)$",
            re.DOTALL,
        ),
    ),
]


def decode(text: str) -> tuple[str, dict[str, str]]:
    """The prompt name and variables a rendered ``prompts/qa_entailment`` prompt was made from."""
    for name, marker, pattern in _PROMPTS:
        if marker in text:
            found = pattern.search(text[text.rindex("Q: ") :] if name == "qa2d" else text)
            assert found is not None, f"cannot read the variables of {name}: {text[-200:]!r}"
            return name, found.groupdict()
    raise AssertionError(f"not a qa_entailment prompt: {text[:80]!r}")


class PromptModel(TextOnlyClient):
    """A model whose replies come from ``reply(role, prompt, variables, context)``; ``calls`` records every
    (role, prompt, variables) and ``conversations`` every request's length."""

    def __init__(
        self, reply: Reply, role: str = "evaluator", calls: list[tuple[str, str, dict[str, str]]] | None = None
    ):
        super().__init__()
        self.reply, self.role = reply, role
        self.calls = calls if calls is not None else []
        self.conversations: list[int] = []

    async def _complete(self, messages: Sequence[LLMMessage], args: Mapping[str, Any]) -> CreateResult:
        *earlier, last = list(messages)
        prompt, variables = decode(text_of(last))
        context = []
        for asked, answered in zip(earlier[::2], earlier[1::2], strict=True):
            assert isinstance(answered, AssistantMessage)
            context.append((*decode(text_of(asked)), text_of(answered)))
        self.calls.append((self.role, prompt, variables))
        self.conversations.append(len(messages))
        text = self.reply(self.role, prompt, variables, context)
        return CreateResult(
            finish_reason="stop", content=text, usage=RequestUsage(prompt_tokens=0, completion_tokens=0), cached=False
        )


def write_script(path: Path, script: Script) -> Path:
    path.write_text(yaml.safe_dump(script.model_dump(exclude_none=True), allow_unicode=True), encoding="utf-8")
    return path


def write_jsonl(path: Path, rows: Iterable[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def cell_rows(human: Mapping[HierarchyCell, bool] | None = None) -> list[dict]:
    """One generic-JSONL row per hierarchy cell, each from its own QA system."""
    human = human or {
        HierarchyCell.SUP_ONLY: True,
        HierarchyCell.BOTH: True,
        HierarchyCell.INF_ONLY: False,
        HierarchyCell.NEITHER: False,
    }
    return [
        {
            "id": f"q1-{cell.name.lower()}",
            "question": QUESTION,
            "gold_answers": [GOLD],
            "system_answer": answer,
            "system": cell.name.lower(),
            "human_judgment": human[cell],
        }
        for cell, (answer, _) in CELLS.items()
    ]


def all_entails() -> set[tuple[str, str]]:
    return set().union(*(e for _, e in CELLS.values()))


# --- a rule-based stand-in for an evaluator LLM behind an OpenAI-compatible endpoint (tests/fake_openai.py) -------

_QA2D = re.compile(r"^Q: (?P<q>[^\n]*)\nA: (?P<a>.*)\nS:\s*$", re.DOTALL)  # the pair to convert (the last Q:)
_ENTAILMENT = re.compile(r"Premise: (?P<p>[^\n]*)\nHypothesis: (?P<h>[^\n]*)\n")
_STATEMENT = re.compile(r"^The answer to '.*' is: (?P<a>.*)$")


def _answer_tokens(statement_text: str) -> set[str]:
    from voirdire.protocols.qa_entailment.lexical import normalize_answer

    found = _STATEMENT.match(statement_text)
    return set(normalize_answer(found.group("a") if found else statement_text).split())


def rule_based_evaluator(messages: list[dict]) -> str:
    """Replies to the paper's prompts without a model: QA2D wraps the answer in a fixed sentence; the entailment
    test says "entailment" iff the hypothesis's answer words all occur in the premise's (lexical, not semantic);
    an explanation is a fixed two-step chain; a score is 3. Its judgments are only good for testing the plumbing."""
    last = str(messages[-1]["content"])
    if "Convert a question answer pair" in last and (m := _QA2D.search(last[last.rindex("Q: ") :])) is not None:
        answer = " ".join(m.group("a").split())
        return f"S: The answer to '{m.group('q')}' is: {answer}"
    if (m := _ENTAILMENT.search(last)) is not None:
        premise, hypothesis = _answer_tokens(m.group("p")), _answer_tokens(m.group("h"))
        return "entailment" if hypothesis and hypothesis <= premise else "neutral"
    if "list the reasoning process" in last:
        return "1. S1 names the answer.\n2. The answer is more general. [[ASSUMPTION]]"
    return "3"
