"""The entailment grader (§3, App. A.1, App. D) as a voirdire protocol: every hierarchy cell with its transcript,
both decision variants, each partial-mark scheme, malformed replies (recorded with their outcome, never defaulted),
shared gold statements, resume, the NLI backend, and the declared state machine.

The first tests decode every request back into (prompt, variables) for a Python stand-in of the evaluator model
(``helpers.PromptModel``) and run the grader in memory; the later ones run it through ``run_protocol`` with a
scripted model and read the transcript file back.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from autogen_core.models import AssistantMessage, UserMessage

from tests.protocols.qa_entailment.helpers import (
    CELLS,
    EXPLANATION,
    GOLD,
    QUESTION,
    Exchange,
    PromptModel,
    evaluator_script,
    statement,
)
from voirdire.models import ScriptedChatCompletionClient
from voirdire.protocols.qa_entailment.data import QAItem
from voirdire.protocols.qa_entailment.entailment import EntailmentOutcome
from voirdire.protocols.qa_entailment.hierarchy import HierarchyCell
from voirdire.protocols.qa_entailment.partial_marks import BOTTOM_TIER
from voirdire.protocols.qa_entailment.protocol import MACHINE, QAEntailmentGrading, QAEntailmentParams
from voirdire.protocols.qa_entailment.scoring import partial_mark_aurocs, system_reports
from voirdire.runner import run_in_memory, run_protocol
from voirdire.session.machine import UndeclaredTransition
from voirdire.session.protocol import Session
from voirdire.transcript import (
    MemoryWriter,
    Message,
    ModelCall,
    ParseFailure,
    SessionRecord,
    Step,
    Transition,
    Verdict,
    load,
)

OAK = "where is the tv show the curse of oak island filmed"
STATES = ("qa2d", "entailment", "hierarchy", "partial_marks", "done")


def oak_statement(answer: str) -> str:
    return f"The show is filmed at {answer}."


class Scripted:
    """A fake model: QA2D wraps the answer, entailment follows a relation over answers, other prompts reply from
    fixed text. Records every call; ``overrides`` replaces the reply to chosen calls."""

    def __init__(
        self,
        entails: set[tuple[str, str]],
        *,
        explanation: str = "1. Given.\n2. Oak Island is in Nova Scotia. [[INFO]]\n3. So it holds. [[ASSUMPTION]]",
        difficulty: str = "2",
        closeness: str = "4",
        overrides: Callable[[str, Mapping[str, str]], str | None] | None = None,
    ) -> None:
        self.entails = entails
        self.explanation, self.difficulty, self.closeness = explanation, difficulty, closeness
        self.overrides = overrides
        self.calls: list[tuple[str, str, dict[str, str]]] = []

    def __call__(self, role: str, prompt: str, variables: Mapping[str, str], context: Sequence[Exchange] = ()) -> str:
        self.calls.append((role, prompt, dict(variables)))
        # Only the Inference + LLM Score follow-up continues a conversation: after the explanation exchange.
        assert not context or (prompt == "inference_score" and [c[0] for c in context] == ["inference_explanation"])
        if self.overrides and (reply := self.overrides(prompt, variables)) is not None:
            return reply
        if prompt == "qa2d":
            return f"S: {oak_statement(variables['answer'])}"
        if prompt == "entailment":
            premise, hypothesis = (_answer_of(variables[k]) for k in ("premise", "hypothesis"))
            return "Entailment" if premise == hypothesis or (premise, hypothesis) in self.entails else "neutral"
        if prompt == "inference_explanation":
            return self.explanation
        if prompt == "inference_score":
            ((_, earlier_variables, earlier_reply),) = context
            assert earlier_reply == self.explanation and set(earlier_variables) == {"s1", "s2"}
            return self.difficulty
        if prompt == "llm_score":
            return self.closeness
        raise AssertionError(f"unexpected prompt {prompt}")

    def count(self, prompt: str) -> int:
        return sum(1 for _, p, _ in self.calls if p == prompt)


def _answer_of(text: str) -> str:
    return text.removeprefix("The show is filmed at ").removesuffix(".")


def _item(
    answer: str, golds: tuple[str, ...] = ("Oak Island",), human: bool | None = True, i: int = 0, system: str = "sys"
) -> QAItem:
    return QAItem(
        id=f"it{i}", question=OAK, gold_answers=golds, system=system, system_answer=answer, human_judgment=human
    )


@dataclass
class Graded:
    """One session read back: its verdict statistics as attributes (cell, judgment, judgments, partial_marks, ...),
    its steps, transitions and parse failures."""

    item: QAItem
    verdict: Verdict
    events: list[Any]

    def __getattr__(self, name: str) -> Any:
        return self.verdict.statistics[name]

    @property
    def cell(self) -> HierarchyCell | None:
        return HierarchyCell(self.verdict.statistics["cell"]) if self.verdict.statistics["cell"] else None

    @property
    def system_answer(self) -> str:
        return self.item.system_answer

    @property
    def gold_answers(self) -> list[str]:
        return [self.item.gold_answers[i] for i in self.verdict.statistics["gold_indices"]]

    def steps(self, name: str) -> list[dict[str, Any]]:
        return [e.data for e in self.events if isinstance(e, Step) and e.name == name]

    @property
    def states(self) -> list[str]:
        return [e.to_state for e in self.events if isinstance(e, Transition)]

    @property
    def failures(self) -> list[ParseFailure]:
        return [e for e in self.events if isinstance(e, ParseFailure)]


async def grade_all(
    items: list[QAItem], model: Scripted, params: QAEntailmentParams | None = None, **kw: Any
) -> list[Graded]:
    protocol = QAEntailmentGrading(params, **kw)
    clients = {role: PromptModel(model, role) for role in protocol.required_roles()}
    verdicts, writer = await run_in_memory(protocol, items, clients=clients, keep=True)
    for record in writer.records:
        json.dumps(record.model_dump(mode="json"))  # every record is a transcript line
    return [
        Graded(it, v, [r for r in writer.records if getattr(r, "session_id", None) == it.id])
        for it, v in zip(items, verdicts, strict=True)
    ]


async def grade(item: QAItem, model: Scripted, params: QAEntailmentParams | None = None, **kw: Any) -> Graded:
    (graded,) = await grade_all([item], model, params, **kw)
    return graded


# (system answer, relation, expected cell): "X > Y" means X's statement entails Y's.
CASES = [
    ("on Oak Island off Nova Scotia", {("on Oak Island off Nova Scotia", "Oak Island")}, HierarchyCell.SUP_ONLY),
    ("Oak Island", set(), HierarchyCell.BOTH),
    ("Nova Scotia", {("Oak Island", "Nova Scotia")}, HierarchyCell.INF_ONLY),
    ("Hawaii", set(), HierarchyCell.NEITHER),
]


@pytest.mark.parametrize(("answer", "entails", "cell"), CASES)
async def test_every_cell_through_the_grader(answer: str, entails: set, cell: HierarchyCell) -> None:
    model = Scripted(entails)
    graded = await grade(_item(answer), model)
    assert graded.cell is cell
    assert graded.judgment is (cell is not HierarchyCell.NEITHER)  # "union" by default
    assert graded.judgments == {"union": cell is not HierarchyCell.NEITHER, "minus": cell.in_sup}
    assert graded.system_statement == oak_statement(answer)
    assert graded.gold_statements == [oak_statement("Oak Island")]
    # Both directions against the gold statement, with premise/hypothesis swapped.
    sup, inf = graded.steps("entailment")
    assert (sup["direction"], inf["direction"]) == ("system_entails_gold", "gold_entails_system")
    assert (sup["premise"], sup["hypothesis"]) == (inf["hypothesis"], inf["premise"])
    assert (sup["premise"], sup["hypothesis"]) == (oak_statement(answer), oak_statement("Oak Island"))
    # Only A_inf − A_sup gets the explanation step by default.
    assert model.count("inference_explanation") == (1 if cell is HierarchyCell.INF_ONLY else 0)
    explained = cell is HierarchyCell.INF_ONLY
    assert graded.states == ["qa2d", "entailment", "hierarchy", *(["partial_marks"] if explained else []), "done"]
    assert len(graded.steps("statement")) == 2 and not graded.failures
    assert isinstance(graded.events[-1], Verdict)


async def test_minus_decision_variant_changes_the_judgment() -> None:
    params = QAEntailmentParams(decision="minus")
    graded = await grade(_item("Nova Scotia"), Scripted({("Oak Island", "Nova Scotia")}), params)
    assert graded.cell is HierarchyCell.INF_ONLY and graded.judgment is False and graded.judgments["union"] is True


async def test_every_gold_answer_is_tested_and_witnesses_can_differ() -> None:
    golds = ("Oak Island", "", "Nova Scotia", "Canada")
    entails = {("Oak Island, Nova Scotia", "Nova Scotia"), ("Oak Island", "Oak Island, Nova Scotia")}
    model = Scripted(entails)
    graded = await grade(_item("Oak Island, Nova Scotia", golds), model)
    assert graded.gold_indices == [0, 2, 3]  # the blank gold piece is skipped, indices kept
    assert len(graded.steps("entailment")) == 6 and model.count("qa2d") == 4
    assert graded.sup_witnesses == [2] and graded.inf_witnesses == [0]
    assert graded.cell is HierarchyCell.BOTH


async def test_gold_statements_are_shared_across_systems() -> None:
    model = Scripted(set())
    items = [_item("on Oak Island", system="a", i=1), _item("Hawaii", system="b", i=2)]
    _, second = await grade_all(items, model)
    assert model.count("qa2d") == 3  # gold once, two system answers
    assert [d["cached"] for d in second.steps("statement")] == [False, True]
    assert second.steps("statement")[1]["from_session"] == "it1"
    unshared = Scripted(set())
    await grade_all(
        [_item("on Oak Island", i=1), _item("Hawaii", i=2)], unshared, QAEntailmentParams(share_gold_statements=False)
    )
    assert unshared.count("qa2d") == 4


async def test_partial_mark_chain_for_each_scheme() -> None:
    params = QAEntailmentParams(inference_llm_score=True, llm_score=True)
    model = Scripted({("Oak Island", "Nova Scotia")})
    graded = await grade(_item("Nova Scotia"), model, params)
    assert graded.cell is HierarchyCell.INF_ONLY
    (record,) = graded.steps("explanation")
    # Explanation from the gold statement (S1) to the system statement (S2).
    assert (record["s1"], record["s2"]) == (oak_statement("Oak Island"), oak_statement("Nova Scotia"))
    steps, info, assumption = record["n_steps"], record["n_info"], record["n_assumption"]
    assert (steps, info, assumption) == (3, 1, 1)
    assert graded.partial_marks == {
        "CIA": -(10 * steps + 3 * info + 5 * assumption),
        "C": -10 * steps,
        "IA": -(3 * info + 5 * assumption),
        "inference_llm_score": -2.0,
        "llm_score": 4.0,
    }
    assert graded.ranking_scores == graded.partial_marks
    assert graded.llm_score == 4 and record["difficulty"] == 2 and graded.explanations[0]["difficulty"] == 2
    llm_call = next(v for _, p, v in model.calls if p == "llm_score")
    assert llm_call["golden_answers"] == "Oak Island" and llm_call["system_answer"] == "Nova Scotia"
    assert {d["scheme"] for d in graded.steps("partial_mark")} == set(graded.partial_marks)
    assert graded.model_calls == 2 + 2 + 1 + 1 + 1


async def test_sup_only_answers_can_be_explained_too() -> None:
    params = QAEntailmentParams(explain_cells=(HierarchyCell.INF_ONLY, HierarchyCell.SUP_ONLY))
    graded = await grade(_item("Oak Island, NS"), Scripted({("Oak Island, NS", "Oak Island")}), params)
    assert graded.cell is HierarchyCell.SUP_ONLY
    (record,) = graded.steps("explanation")
    assert (record["s1"], record["s2"]) == (oak_statement("Oak Island, NS"), oak_statement("Oak Island"))
    with pytest.raises(ValueError):
        QAEntailmentParams(explain_cells=(HierarchyCell.BOTH,))


async def test_unexplained_cells_rank_by_tier() -> None:
    params = QAEntailmentParams(llm_score=True)
    both = await grade(_item("Oak Island"), Scripted(set()), params)
    neither = await grade(_item("Hawaii"), Scripted(set()), params)
    assert both.ranking_scores["CIA"] > 0 > neither.ranking_scores["CIA"]
    assert both.llm_score is None and "llm_score" not in both.partial_marks


async def test_malformed_entailment_reply_is_recorded_not_defaulted() -> None:
    def override(prompt: str, variables: Mapping[str, str]) -> str | None:
        return "not entailment" if prompt == "entailment" and "Hawaii" in variables["premise"] else None

    graded = await grade(_item("Hawaii"), Scripted(set(), overrides=override))
    (failure,) = graded.failures
    assert failure.raw == "not entailment" and failure.prompt == "qa_entailment/entailment"
    assert graded.steps("entailment")[0]["outcome"]["label"] is None
    assert graded.steps("entailment")[0]["outcome"]["failure"]["parser"] == "entailment"
    assert graded.cell is None and graded.judgment is None and graded.judgments["minus"] is None
    (record,) = graded.parse_failures
    assert record["step"] == "entailment" and record["direction"] == "system_entails_gold"
    report = system_reports([_item("Hawaii", human=False)], [graded.judgment], [graded.cell])
    assert report["sys"].n_undetermined == 1 and report["sys"].hierarchy == {
        "A_sup - A_inf": 0,
        "A_sup ∩ A_inf": 0,
        "A_inf - A_sup": 0,
        "S - (A_sup ∪ A_inf)": 0,
        "undetermined": 1,
    }


async def test_malformed_qa2d_and_explanation_replies() -> None:
    def bad_system_statement(prompt: str, variables: Mapping[str, str]) -> str | None:
        return "Q: where?" if prompt == "qa2d" and variables["answer"] == "Hawaii" else None

    model = Scripted(set(), overrides=bad_system_statement)
    graded = await grade(_item("Hawaii"), model)
    assert graded.parse_failures[0]["parser"] == "statement" and graded.judgment is None
    assert model.count("entailment") == 0 and "unreadable" in (graded.note or "")
    assert graded.states == ["qa2d", "done"]  # no entailment test without the system statement

    model = Scripted({("Oak Island", "Nova Scotia")}, explanation="It just follows.")
    graded = await grade(_item("Nova Scotia"), model, QAEntailmentParams(inference_llm_score=True))
    assert graded.judgment is True  # the hierarchy stands; only the step-counting marks are missing
    assert graded.partial_marks["CIA"] is None and graded.ranking_scores["CIA"] is None
    assert [f["parser"] for f in graded.parse_failures] == ["explanation"]
    # App. D asks the rating after every explanation (the released cot.py scores every chain): unnumbered steps
    # cost CIA, C and IA, not Inference + LLM Score.
    assert model.count("inference_score") == 1 and graded.explanations[0]["difficulty"] == 2
    assert graded.partial_marks["inference_llm_score"] == -2.0 and graded.ranking_scores["inference_llm_score"] == -2.0

    model = Scripted({("Oak Island", "Nova Scotia")}, difficulty="3 or 4", closeness="seven")
    graded = await grade(_item("Nova Scotia"), model, QAEntailmentParams(inference_llm_score=True, llm_score=True))
    assert graded.partial_marks["inference_llm_score"] is None and graded.partial_marks["llm_score"] is None
    assert graded.partial_marks["CIA"] is not None
    assert sorted(f["parser"] for f in graded.parse_failures) == ["score", "score"]


async def test_no_rating_without_an_explanation_reply() -> None:
    model = Scripted({("Oak Island", "Nova Scotia")}, explanation="   ")
    graded = await grade(_item("Nova Scotia"), model, QAEntailmentParams(inference_llm_score=True))
    assert model.count("inference_explanation") == 1 and model.count("inference_score") == 0
    assert graded.partial_marks["inference_llm_score"] is None and graded.ranking_scores["inference_llm_score"] is None


async def test_explanation_failure_is_recorded_against_the_step_schemes_only() -> None:
    model = Scripted({("Oak Island", "Nova Scotia")}, explanation="It just follows.")
    graded = await grade(_item("Nova Scotia"), model, QAEntailmentParams(inference_llm_score=True))
    (failure,) = graded.parse_failures
    assert failure["step"] == "explanation" and failure["schemes"] == ["CIA", "C", "IA"]
    (explanation,) = graded.steps("explanation")
    assert explanation["marks"] == {} and explanation["difficulty"] == 2


@pytest.mark.parametrize(
    ("difficulty", "closeness", "marks"),
    [
        ("1: Very easy", "5: The AI-generated answer is completely right.", (-1.0, 5.0)),
        ("Rating: 4 - Hard", "2 (mostly wrong)", (-4.0, 2.0)),
        ("4: Very easy", "5 (Very hard)", (None, None)),  # another number's label, the other prompt's label
    ],
)
async def test_scores_that_echo_the_scale(difficulty: str, closeness: str, marks: tuple) -> None:
    model = Scripted({("Oak Island", "Nova Scotia")}, difficulty=difficulty, closeness=closeness)
    graded = await grade(_item("Nova Scotia"), model, QAEntailmentParams(inference_llm_score=True, llm_score=True))
    assert (graded.partial_marks["inference_llm_score"], graded.partial_marks["llm_score"]) == marks


async def test_llm_score_sign_of_the_authors_notebook() -> None:
    relation = {("Oak Island", "Nova Scotia")}
    params = QAEntailmentParams(explain=False, llm_score=True)
    closeness = await grade(_item("Nova Scotia"), Scripted(relation, closeness="5"), params)
    negated = QAEntailmentParams(explain=False, llm_score=True, llm_score_sign="negated")
    negated_graded = await grade(_item("Nova Scotia"), Scripted(relation, closeness="5"), negated)
    assert closeness.ranking_scores["llm_score"] == 5.0 and negated_graded.ranking_scores["llm_score"] == -5.0
    with pytest.raises(ValueError, match="only with --llm-score"):
        QAEntailmentParams(llm_score_sign="negated")


async def test_llm_score_population_follows_explain_cells() -> None:
    # The released baseline-scoring.py scores both one-directional cells; here that is explain_cells with A_sup − A_inf.
    relation = {("on Oak Island off Nova Scotia", "Oak Island")}
    default = QAEntailmentParams(explain=False, llm_score=True)
    both = default.model_copy(update={"explain_cells": (HierarchyCell.INF_ONLY, HierarchyCell.SUP_ONLY)})
    model = Scripted(relation)
    graded = await grade(_item("on Oak Island off Nova Scotia"), model, default)
    assert graded.cell is HierarchyCell.SUP_ONLY and model.count("llm_score") == 0 and graded.llm_score is None
    model = Scripted(relation)
    graded = await grade(_item("on Oak Island off Nova Scotia"), model, both)
    assert model.count("llm_score") == 1 and graded.ranking_scores["llm_score"] == 4.0


async def test_empty_answer_and_no_gold() -> None:
    model = Scripted(set())
    empty = await grade(_item("  "), model)
    assert empty.cell is HierarchyCell.NEITHER and empty.judgment is False and model.calls == []
    assert empty.ranking_scores["CIA"] == BOTTOM_TIER  # still ranked (lowest) for AUROC
    assert empty.states == ["done"]  # nothing to convert
    no_gold = await grade(_item("x", golds=("", " ")), model)
    assert no_gold.cell is None and no_gold.judgment is None and model.calls == []


async def test_roles_and_max_gold_answers() -> None:
    params = QAEntailmentParams(max_gold_answers=1, roles={"qa2d": "converter", "entailment": "nli_judge"})
    model = Scripted(set())
    graded = await grade(_item("x", golds=("a", "b")), model, params)
    assert graded.gold_answers == ["a"]
    assert {(r, p) for r, p, _ in model.calls} == {("converter", "qa2d"), ("nli_judge", "entailment")}


class FixedNLI:
    name = "nli"

    def __init__(self, label: str) -> None:
        self.label = label
        self.pairs: list[tuple[str, str]] = []

    async def entail(self, premise: str, hypothesis: str) -> EntailmentOutcome:
        self.pairs.append((premise, hypothesis))
        return EntailmentOutcome(label=self.label, probabilities={self.label: 1.0})  # type: ignore[arg-type]


async def test_injected_entailment_backend_replaces_the_llm_test() -> None:
    model, backend = Scripted(set()), FixedNLI("entailment")
    graded = await grade(_item("Hawaii"), model, QAEntailmentParams(backend="nli"), entailment=backend)
    assert graded.cell is HierarchyCell.BOTH and model.count("entailment") == 0 and len(backend.pairs) == 2
    assert graded.steps("entailment")[0]["backend"] == "nli" and graded.backend == "nli"
    with pytest.raises(ValueError, match="nli_model"):
        await grade(_item("Hawaii"), model, QAEntailmentParams(backend="nli"))


async def test_partial_mark_aurocs() -> None:
    params = QAEntailmentParams(inference_llm_score=True)
    relation = {("Oak Island", "Nova Scotia"), ("Oak Island", "Canada")}
    graded = [
        await grade(_item("Oak Island", human=True, i=1), Scripted(relation), params),  # top tier
        await grade(_item("Nova Scotia", human=True, i=2), Scripted(relation, difficulty="1"), params),
        await grade(_item("Canada", human=False, i=3), Scripted(relation, difficulty="5"), params),
        await grade(_item("Hawaii", human=False, i=4), Scripted(relation), params),  # bottom tier
        await grade(_item("Oak Island", human=None, i=5), Scripted(relation), params),  # unjudged: ignored
    ]
    aurocs = partial_mark_aurocs(graded)  # type: ignore[arg-type]
    assert aurocs["inference_llm_score"].auroc == 1.0 and aurocs["inference_llm_score"].n == 4
    # CIA ties the two explained answers (same explanation): one tied positive/negative pair counts 1/2.
    assert aurocs["CIA"].auroc == pytest.approx(3.5 / 4)
    assert aurocs["token_f1"].n == 4 and aurocs["token_f1"].n_left_out == 0


# ----------------------------------------------------------------------------------------- the state machine


def test_the_machine_is_the_papers_order() -> None:
    assert QAEntailmentGrading.machine is MACHINE and QAEntailmentGrading().states == STATES
    assert MACHINE.initial == ("qa2d", "done") and MACHINE.edges["done"] == ()
    assert MACHINE.allows("hierarchy", "partial_marks") and MACHINE.allows("hierarchy", "done")
    assert not MACHINE.allows("qa2d", "hierarchy") and not MACHINE.allows("entailment", "done")


async def test_an_undeclared_transition_is_refused() -> None:
    protocol = QAEntailmentGrading()
    session = Session(
        run_id="r",
        session_id="s",
        protocol=protocol,
        agents={},
        writer=MemoryWriter(),
        prompts=protocol.prompt_library(),
    )
    with pytest.raises(UndeclaredTransition, match="start -> entailment"):
        session.enter("entailment")  # QA2D comes first (§3)
    session.enter("qa2d")
    with pytest.raises(UndeclaredTransition, match="qa2d -> hierarchy"):
        session.enter("hierarchy")  # no hierarchy without the entailment tests
    session.enter("entailment")
    session.enter("hierarchy")
    session.enter("partial_marks")
    with pytest.raises(UndeclaredTransition, match="partial_marks -> qa2d"):
        session.enter("qa2d")  # one answer, one pass
    session.enter("done")
    with pytest.raises(UndeclaredTransition, match="done -> partial_marks"):
        session.enter("partial_marks")


# ----------------------------------------------------------------------------------------- through run_protocol


def item(answer: str, *, system: str = "sys", human: bool | None = True, golds: tuple[str, ...] = (GOLD,)) -> QAItem:
    return QAItem(
        id=f"q-{system}",
        question=QUESTION,
        gold_answers=golds,
        system=system,
        system_answer=answer,
        human_judgment=human,
    )


async def grade_file(
    tmp_path: Path,
    items: list[QAItem],
    client: ScriptedChatCompletionClient | None,
    params: QAEntailmentParams | None = None,
    **kw: Any,
) -> tuple[Any, dict[str, SessionRecord]]:
    out = tmp_path / "t.jsonl"
    clients = {"evaluator": client} if client is not None else {}
    result = await run_protocol(QAEntailmentGrading(params, **kw), items, out=out, clients=clients)
    return result, load(out).sessions


def steps(session: SessionRecord, name: str) -> list[dict[str, Any]]:
    return [e.data for e in session.of_kind(Step) if e.name == name]


@pytest.mark.parametrize("cell", list(CELLS))
async def test_each_hierarchy_cell_end_to_end(tmp_path: Path, cell: HierarchyCell) -> None:
    answer, entails = CELLS[cell]
    client = ScriptedChatCompletionClient(evaluator_script([answer], entails))
    params = QAEntailmentParams(explain=True)
    result, sessions = await grade_file(tmp_path, [item(answer)], client, params)
    assert not result.errors
    s = sessions["q-sys"]
    explained = cell is HierarchyCell.INF_ONLY

    # States of §3 in order; the explanation step only for A_inf − A_sup (App. D).
    states = [e.to_state for e in s.of_kind(Transition)]
    assert states == ["qa2d", "entailment", "hierarchy", *(["partial_marks"] if explained else []), "done"]

    # Statements: the system answer's and the gold answer's, from QA2D replies.
    stmts = steps(s, "statement")
    assert [(d["of"], d["statement"]) for d in stmts] == [("system", statement(answer)), ("gold", statement(GOLD))]

    # Both entailment calls, premise and hypothesis swapped, with the labels the script gave.
    sup, inf = steps(s, "entailment")
    assert (sup["direction"], inf["direction"]) == ("system_entails_gold", "gold_entails_system")
    assert (sup["premise"], sup["hypothesis"]) == (statement(answer), statement(GOLD))
    assert (inf["premise"], inf["hypothesis"]) == (statement(GOLD), statement(answer))
    assert (sup["outcome"]["label"] == "entailment", inf["outcome"]["label"] == "entailment") == (
        cell.in_sup,
        cell.in_inf,
    )

    # Set membership.
    (member,) = steps(s, "membership")
    assert (member["in_sup"], member["in_inf"], member["cell"]) == (cell.in_sup, cell.in_inf, cell.value)

    # The partial-mark chain: explanation from the gold statement (S1) to the system statement (S2), its counts,
    # and the CIA / C / IA marks (3 steps, 1 [[INFO]], 0 [[ASSUMPTION]]).
    if explained:
        (expl,) = steps(s, "explanation")
        assert (expl["s1"], expl["s2"]) == (statement(GOLD), statement(answer))
        assert (expl["n_steps"], expl["n_info"], expl["n_assumption"]) == (3, 1, 0)
        marks = {d["scheme"]: d["mark"] for d in steps(s, "partial_mark")}
        assert marks == {"CIA": -33.0, "C": -30.0, "IA": -3.0}
    else:
        assert not steps(s, "explanation") and not steps(s, "partial_mark")

    # Every prompt went to the evaluator as a fresh one-message conversation, and each call is recorded.
    calls = s.of_kind(ModelCall)
    assert len(calls) == 4 + explained and {c.role for c in calls} == {"evaluator"}
    assert all(len(conversation) == 1 for conversation in client.seen)
    prompts = [m.prompt for m in s.of_kind(Message) if m.sender == "moderator"]
    assert prompts == ["qa_entailment/qa2d"] * 2 + ["qa_entailment/entailment"] * 2 + (
        ["qa_entailment/inference_explanation"] if explained else []
    )

    v = s.verdict
    assert v is not None and v.decision == ("incorrect" if cell is HierarchyCell.NEITHER else "correct")
    assert v.accepted is (cell is not HierarchyCell.NEITHER)
    st = v.statistics
    assert st["cell"] == cell.value and st["cell_rank"] == cell.rank
    assert st["judgments"] == {"union": cell is not HierarchyCell.NEITHER, "minus": cell.in_sup}
    assert st["human_judgment"] is True and st["system"] == "sys" and st["parse_failures"] == []
    assert st["model_calls"] == len(calls)
    assert f"system statement: {statement(answer)}" in v.evidence
    assert f"gold statement 0 ({GOLD}): {statement(GOLD)}" in v.evidence


async def test_minus_decision_variant(tmp_path: Path) -> None:
    answer, entails = CELLS[HierarchyCell.INF_ONLY]
    client = ScriptedChatCompletionClient(evaluator_script([answer], entails))
    _, sessions = await grade_file(
        tmp_path, [item(answer)], client, QAEntailmentParams(decision="minus", explain=False)
    )
    v = sessions["q-sys"].verdict
    assert v is not None and v.decision == "incorrect" and v.accepted is False
    assert v.statistics["judgments"] == {"union": True, "minus": False}
    assert v.statistics["decision_variant"] == "minus"
    assert not steps(sessions["q-sys"], "explanation")  # partial marks off: no Table 17 call


async def test_each_partial_mark_scheme(tmp_path: Path) -> None:
    answer, entails = CELLS[HierarchyCell.INF_ONLY]
    client = ScriptedChatCompletionClient(evaluator_script([answer], entails, difficulty="4", closeness="2"))
    params = QAEntailmentParams(inference_llm_score=True, llm_score=True)
    _, sessions = await grade_file(tmp_path, [item(answer)], client, params)
    s = sessions["q-sys"]
    v = s.verdict
    assert v is not None
    assert v.statistics["partial_marks"] == {
        "CIA": -33.0,
        "C": -30.0,
        "IA": -3.0,
        "inference_llm_score": -4.0,
        "llm_score": 2.0,
    }
    assert v.statistics["explanations"] == [
        {"gold_index": 0, "n_steps": 3, "n_info": 1, "n_assumption": 0, "marks": {"CIA": -33.0, "C": -30.0, "IA": -3.0},
         "difficulty": 4}
    ]  # fmt: skip
    # Table 17 row 2 is a follow-up in the explanation's conversation: the explanation prompt, the model's
    # explanation as an assistant turn, then the rating prompt. Every other call is a fresh conversation.
    follow_up = next(c for c in client.seen if "rate how hard" in str(c[-1].content))
    assert [type(m) for m in follow_up] == [UserMessage, AssistantMessage, UserMessage]
    assert "list the reasoning process" in str(follow_up[0].content) and follow_up[1].content == EXPLANATION
    assert sum(len(c) == 1 for c in client.seen) == len(client.seen) - 1
    prompts = [m.prompt for m in s.of_kind(Message) if m.sender == "moderator"]
    assert prompts[-3:] == [
        "qa_entailment/inference_explanation",
        "qa_entailment/inference_score",
        "qa_entailment/llm_score",
    ]
    assert {d["scheme"] for d in steps(s, "partial_mark")} == set(v.statistics["partial_marks"])


async def test_malformed_entailment_reply_is_a_parse_failure_with_an_outcome(tmp_path: Path) -> None:
    answer = "Mary Shelley"
    script = evaluator_script([answer], set(), first={r"Premise: Mary Shelley": "Not entailment, I think."})
    _, sessions = await grade_file(tmp_path, [item(answer)], ScriptedChatCompletionClient(script))
    s = sessions["q-sys"]
    (failure,) = s.of_kind(ParseFailure)
    assert failure.role == "evaluator" and failure.prompt == "qa_entailment/entailment"
    assert failure.raw == "Not entailment, I think." and "ruled out: ['entailment']" in failure.error
    assert "system_entails_gold against gold answer 0 is unknown" in failure.outcome
    assert "entailment" in failure.expected
    v = s.verdict
    assert v is not None and v.decision == "undetermined" and v.accepted is None
    # The other direction was read (neutral): in_sup unknown, in_inf False, so no cell and no judgment.
    assert (v.statistics["in_sup"], v.statistics["in_inf"], v.statistics["cell"]) == (None, False, None)
    assert v.statistics["parse_failures"] == [
        {
            "step": "entailment",
            "parser": "entailment",
            "reason": failure.error,
            "gold_index": 0,
            "direction": "system_entails_gold",
            "of": None,
        }
    ]


async def test_unnumbered_explanation_costs_cia_c_ia_but_is_still_rated(tmp_path: Path) -> None:
    answer, entails = CELLS[HierarchyCell.INF_ONLY]
    script = evaluator_script([answer], entails, explanation="It follows directly.", difficulty="1: Very easy")
    client = ScriptedChatCompletionClient(script)
    _, sessions = await grade_file(tmp_path, [item(answer)], client, QAEntailmentParams(inference_llm_score=True))
    s = sessions["q-sys"]
    (failure,) = s.of_kind(ParseFailure)
    assert failure.prompt == "qa_entailment/inference_explanation"
    assert "no CIA / C / IA mark" in failure.outcome and "still asked" in failure.outcome
    v = s.verdict
    assert v is not None
    assert v.statistics["partial_marks"] == {"CIA": None, "C": None, "IA": None, "inference_llm_score": -1.0}
    assert v.statistics["ranking_scores"]["inference_llm_score"] == -1.0
    assert [f["schemes"] for f in v.statistics["parse_failures"]] == [["CIA", "C", "IA"]]
    prompts = [m.prompt for m in s.of_kind(Message) if m.sender == "moderator"]
    assert prompts[-2:] == ["qa_entailment/inference_explanation", "qa_entailment/inference_score"]


async def test_malformed_qa2d_reply_stops_before_entailment(tmp_path: Path) -> None:
    answer = "Mary Shelley"
    script = evaluator_script([answer], set(), first={r"A: Mary Shelley\s*S:\s*$": "Q: who wrote it?"})
    _, sessions = await grade_file(tmp_path, [item(answer)], ScriptedChatCompletionClient(script))
    s = sessions["q-sys"]
    (failure,) = s.of_kind(ParseFailure)
    assert failure.prompt == "qa_entailment/qa2d" and "no entailment test" in failure.outcome
    assert not steps(s, "entailment") and len(s.of_kind(ModelCall)) == 1
    assert s.verdict is not None and s.verdict.decision == "undetermined"


async def test_gold_statements_are_shared_across_sessions_and_runs_resume(tmp_path: Path) -> None:
    items = [item("Stoker", system="a"), item("Mary Shelley", system="b")]
    client = ScriptedChatCompletionClient(evaluator_script(["Stoker", "Mary Shelley"], set()))
    result, sessions = await grade_file(tmp_path, items, client)
    assert set(result.verdicts) == {"q-a", "q-b"}
    gold_conversions = [c for c in client.seen if f"A: {GOLD}\nS:" in str(c[-1].content)]
    assert len(gold_conversions) == 1  # converted once, in the first session
    (gold_b,) = [d for d in steps(sessions["q-b"], "statement") if d["of"] == "gold"]
    assert gold_b["cached"] is True and gold_b["from_session"] == "q-a" and gold_b["statement"] == statement(GOLD)
    assert len(sessions["q-b"].of_kind(ModelCall)) == 3

    again = await run_protocol(QAEntailmentGrading(), items, out=tmp_path / "t.jsonl", clients={"evaluator": client})
    assert again.skipped == 2 and set(again.verdicts) == {"q-a", "q-b"} and len(client.seen) == 7


async def test_empty_answer_needs_no_model(tmp_path: Path) -> None:
    client = ScriptedChatCompletionClient(evaluator_script([], set()))
    _, sessions = await grade_file(tmp_path, [item("  ", human=False)], client)
    v = sessions["q-sys"].verdict
    assert v is not None and v.decision == "incorrect" and v.statistics["cell"] == HierarchyCell.NEITHER.value
    assert client.seen == [] and "empty system answer" in v.statistics["note"]


async def test_a_broken_session_is_an_error_and_the_run_goes_on(tmp_path: Path) -> None:
    # No rule for "Jane Austen": the scripted model runs out of replies in that session only.
    client = ScriptedChatCompletionClient(evaluator_script(["Bram Stoker"], set()))
    items = [item("Jane Austen", system="a"), item("Bram Stoker", system="b")]
    result, sessions = await grade_file(tmp_path, items, client)
    assert "ScriptExhausted" in result.errors["q-a"] and result.verdicts["q-b"].accepted is True
    assert sessions["q-a"].verdict is None and sessions["q-a"].errors


def test_roles_follow_the_configuration() -> None:
    assert QAEntailmentGrading().required_roles() == ("evaluator",)
    params = QAEntailmentParams(
        roles={"qa2d": "generator", "entailment": "verifier", "explanation": "evaluator", "scoring": "checker"},
        llm_score=True,
    )
    assert QAEntailmentGrading(params).required_roles() == ("generator", "verifier", "evaluator", "checker")
    nli = QAEntailmentParams(backend="nli", nli_model="/nowhere", explain=False)
    assert QAEntailmentGrading(nli).required_roles() == ("evaluator",)


async def test_nli_backend_through_the_protocol(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    from tests.protocols.qa_entailment.tiny_nli import NLI_LABELS, build_cross_encoder

    model = build_cross_encoder(tmp_path / "nli", NLI_LABELS, favour=1)  # always "entailment"
    answer = "Mary Shelley"
    client = ScriptedChatCompletionClient(evaluator_script([answer], set()))
    params = QAEntailmentParams(backend="nli", nli_model=str(model))
    result, sessions = await grade_file(tmp_path, [item(answer)], client, params)
    assert not result.errors
    s = sessions["q-sys"]
    entailment = steps(s, "entailment")
    assert [d["backend"] for d in entailment] == ["nli", "nli"]
    assert entailment[0]["outcome"]["probabilities"]["entailment"] > 0.99
    # Only QA2D went to the model; the NLI model put the answer in A_sup ∩ A_inf.
    assert [m.prompt for m in s.of_kind(Message) if m.sender == "moderator"] == ["qa_entailment/qa2d"] * 2
    v = s.verdict
    assert isinstance(v, Verdict) and v.statistics["cell"] == HierarchyCell.BOTH.value
    assert v.statistics["backend"] == "nli"


async def test_nli_labels_for_generic_label_names(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    from tests.protocols.qa_entailment.tiny_nli import build_cross_encoder

    model = build_cross_encoder(tmp_path / "nli", {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}, favour=2)
    params = QAEntailmentParams(
        backend="nli", nli_model=str(model), nli_labels=("entailment", "contradiction", "neutral")
    )
    backend = QAEntailmentGrading(params).entailment_backend()
    assert backend is not None and (await backend.entail("a", "b")).label == "neutral"
    with pytest.raises(ValueError, match="once each"):  # refused with the options, before any model is loaded
        QAEntailmentParams(backend="nli", nli_model=str(model), nli_labels=("entailment", "entailment", "neutral"))
