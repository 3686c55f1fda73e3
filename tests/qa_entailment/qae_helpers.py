"""Scripted evaluator models for the QA entailment protocol and CLI tests.

The script answers the paper's prompts by regex rules over the rendered prompt (``voirdire.models.Script``): QA2D
turns each known answer into ``"<answer> wrote the novel Dracula."``; the entailment test replies "Entailment"
for pairs in a given relation (and identical statements), else "neutral"; the Table 17 prompts get fixed replies.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import yaml

from voirdire.models import Script, ScriptRule
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
