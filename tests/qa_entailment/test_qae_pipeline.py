"""The async entailment evaluator with scripted model replies: QA2D -> entailment both ways -> hierarchy ->
partial marks, its events, malformed replies, and the AUROC report."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from voirdire.protocols.qa_entailment.data import QAItem
from voirdire.protocols.qa_entailment.hierarchy import HierarchyCell
from voirdire.protocols.qa_entailment.partial_marks import BOTTOM_TIER
from voirdire.protocols.qa_entailment.pipeline import (
    STATES,
    EntailmentEvaluatorConfig,
    EntailmentOutcome,
    Exchange,
    grade_item,
    make_entailment_backend,
)
from voirdire.protocols.qa_entailment.report import partial_mark_aurocs, system_reports

QUESTION = "where is the tv show the curse of oak island filmed"


def statement(answer: str) -> str:
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

    async def __call__(
        self, role: str, prompt: str, variables: Mapping[str, str], context: Sequence[Exchange] = ()
    ) -> str:
        self.calls.append((role, prompt, dict(variables)))
        # Only the Inference + LLM Score follow-up continues a conversation: after the explanation exchange.
        assert not context or (prompt == "inference_score" and [c[0] for c in context] == ["inference_explanation"])
        if self.overrides and (reply := self.overrides(prompt, variables)) is not None:
            return reply
        if prompt == "qa2d":
            return f"S: {statement(variables['answer'])}"
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
        id=f"it{i}",
        question=QUESTION,
        gold_answers=golds,
        system=system,
        system_answer=answer,
        human_judgment=human,
    )


class Events:
    def __init__(self) -> None:
        self.log: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, kind: str, data: dict[str, Any]) -> None:
        json.dumps(data)  # every event must be serialisable for the transcript
        self.log.append((kind, data))

    def kinds(self) -> list[str]:
        return [k for k, _ in self.log]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [d for k, d in self.log if k == kind]


# (system answer, relation, expected cell): "X > Y" means X's statement entails Y's.
CASES = [
    ("on Oak Island off Nova Scotia", {("on Oak Island off Nova Scotia", "Oak Island")}, HierarchyCell.SUP_ONLY),
    ("Oak Island", set(), HierarchyCell.BOTH),
    ("Nova Scotia", {("Oak Island", "Nova Scotia")}, HierarchyCell.INF_ONLY),
    ("Hawaii", set(), HierarchyCell.NEITHER),
]


@pytest.mark.parametrize(("answer", "entails", "cell"), CASES)
async def test_every_cell_through_the_pipeline(answer: str, entails: set, cell: HierarchyCell) -> None:
    model, events = Scripted(entails), Events()
    graded = await grade_item(_item(answer), model, on_event=events)
    assert graded.cell is cell
    assert graded.judgment is (cell is not HierarchyCell.NEITHER)  # "union" by default
    assert graded.judgments == {"union": cell is not HierarchyCell.NEITHER, "minus": cell.in_sup}
    assert graded.system_statement == statement(answer) and graded.gold_statements == [statement("Oak Island")]
    # Both directions against the gold statement, with premise/hypothesis swapped.
    sup, inf = graded.entailment_calls
    assert (sup.direction, inf.direction) == ("system_entails_gold", "gold_entails_system")
    assert (
        (sup.premise, sup.hypothesis) == (inf.hypothesis, inf.premise) == (statement(answer), statement("Oak Island"))
    )
    # Only A_inf − A_sup gets the explanation step by default.
    assert model.count("inference_explanation") == (1 if cell is HierarchyCell.INF_ONLY else 0)
    kinds = events.kinds()
    assert kinds[0] == "transition" and kinds[-1] == "verdict"
    assert [d["state"] for d in events.of("transition")] == list(STATES[: 4 if cell is HierarchyCell.INF_ONLY else 3])
    assert kinds.count("entailment") == 2 and kinds.count("statement") == 2 and "parse_failure" not in kinds


async def test_minus_decision_variant_changes_the_judgment() -> None:
    config = EntailmentEvaluatorConfig(decision="minus")
    graded = await grade_item(_item("Nova Scotia"), Scripted({("Oak Island", "Nova Scotia")}), config)
    assert graded.cell is HierarchyCell.INF_ONLY and graded.judgment is False and graded.judgments["union"] is True


async def test_every_gold_answer_is_tested_and_witnesses_can_differ() -> None:
    golds = ("Oak Island", "", "Nova Scotia", "Canada")
    entails = {("Oak Island, Nova Scotia", "Nova Scotia"), ("Oak Island", "Oak Island, Nova Scotia")}
    model, events = Scripted(entails), Events()
    graded = await grade_item(_item("Oak Island, Nova Scotia", golds), model, on_event=events)
    assert graded.gold_indices == [0, 2, 3]  # the blank gold piece is skipped, indices kept
    assert len(graded.entailment_calls) == 6 and model.count("qa2d") == 4
    assert graded.membership is not None
    assert graded.membership.sup_witnesses == [2] and graded.membership.inf_witnesses == [0]
    assert graded.cell is HierarchyCell.BOTH


async def test_gold_statements_are_cached_across_systems() -> None:
    cache: dict[tuple[str, str], str] = {}
    model = Scripted(set())
    await grade_item(_item("Oak Island", system="a"), model, statement_cache=cache)
    events = Events()
    await grade_item(_item("Hawaii", system="b"), model, statement_cache=cache, on_event=events)
    assert model.count("qa2d") == 3  # gold once, two system answers
    assert [d["cached"] for d in events.of("statement")] == [False, True]


async def test_partial_mark_chain_for_each_scheme() -> None:
    config = EntailmentEvaluatorConfig(inference_llm_score=True, llm_score=True)
    model, events = Scripted({("Oak Island", "Nova Scotia")}), Events()
    graded = await grade_item(_item("Nova Scotia"), model, config, on_event=events)
    assert graded.cell is HierarchyCell.INF_ONLY
    (record,) = graded.explanations
    # Explanation from the gold statement (S1) to the system statement (S2).
    assert (record.s1, record.s2) == (statement("Oak Island"), statement("Nova Scotia"))
    assert record.explanation is not None
    steps, info, assumption = record.explanation.n_steps, record.explanation.n_info, record.explanation.n_assumption
    assert (steps, info, assumption) == (3, 1, 1)
    assert graded.partial_marks == {
        "CIA": -(10 * steps + 3 * info + 5 * assumption),
        "C": -10 * steps,
        "IA": -(3 * info + 5 * assumption),
        "inference_llm_score": -2.0,
        "llm_score": 4.0,
    }
    assert graded.ranking_scores == graded.partial_marks
    assert graded.llm_score == 4 and record.difficulty == 2
    llm_call = next(v for _, p, v in model.calls if p == "llm_score")
    assert llm_call["golden_answers"] == "Oak Island" and llm_call["system_answer"] == "Nova Scotia"
    assert {d["scheme"] for d in events.of("partial_mark")} == set(graded.partial_marks)
    assert events.of("explanation")[0]["n_steps"] == 3
    assert events.of("verdict")[0]["partial_marks"] == graded.partial_marks
    dumped = json.loads(json.dumps(graded.model_dump(mode="json")))  # the graded item is a transcript record too
    assert dumped["cell"] == "A_inf - A_sup" and dumped["explanations"][0]["explanation"]["steps"][1]["info"]


async def test_sup_only_answers_can_be_explained_too() -> None:
    config = EntailmentEvaluatorConfig(explain_cells=(HierarchyCell.INF_ONLY, HierarchyCell.SUP_ONLY))
    graded = await grade_item(_item("Oak Island, NS"), Scripted({("Oak Island, NS", "Oak Island")}), config)
    assert graded.cell is HierarchyCell.SUP_ONLY
    (record,) = graded.explanations
    assert (record.s1, record.s2) == (statement("Oak Island, NS"), statement("Oak Island"))  # system entails gold
    with pytest.raises(ValueError):
        EntailmentEvaluatorConfig(explain_cells=(HierarchyCell.BOTH,))


async def test_unexplained_cells_rank_by_tier() -> None:
    config = EntailmentEvaluatorConfig(llm_score=True)
    both = await grade_item(_item("Oak Island"), Scripted(set()), config)
    neither = await grade_item(_item("Hawaii"), Scripted(set()), config)
    assert both.ranking_scores["CIA"] > 0 > neither.ranking_scores["CIA"]  # type: ignore[operator]
    assert both.llm_score is None and "llm_score" not in both.partial_marks


async def test_malformed_entailment_reply_is_recorded_not_defaulted() -> None:
    def override(prompt: str, variables: Mapping[str, str]) -> str | None:
        return "not entailment" if prompt == "entailment" and "Hawaii" in variables["premise"] else None

    events = Events()
    graded = await grade_item(_item("Hawaii"), Scripted(set(), overrides=override), on_event=events)
    (failure,) = graded.failures
    assert failure.parser == "entailment" and failure.raw == "not entailment"
    assert graded.entailment_calls[0].outcome.label is None
    assert graded.cell is None and graded.judgment is None and graded.judgments["minus"] is None
    (event,) = events.of("parse_failure")
    assert event["step"] == "entailment" and event["direction"] == "system_entails_gold"
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
    graded = await grade_item(_item("Hawaii"), model)
    assert graded.failures[0].parser == "statement" and graded.judgment is None
    assert model.count("entailment") == 0 and "unreadable" in (graded.note or "")

    model = Scripted({("Oak Island", "Nova Scotia")}, explanation="It just follows.")
    graded = await grade_item(_item("Nova Scotia"), model, EntailmentEvaluatorConfig(inference_llm_score=True))
    assert graded.judgment is True  # the hierarchy stands; only the step-counting marks are missing
    assert graded.partial_marks["CIA"] is None and graded.ranking_scores["CIA"] is None
    assert [f.parser for f in graded.failures] == ["explanation"]
    # App. D asks the rating after every explanation (the released cot.py scores every chain): unnumbered steps
    # cost CIA, C and IA, not Inference + LLM Score.
    assert model.count("inference_score") == 1 and graded.explanations[0].difficulty == 2
    assert graded.partial_marks["inference_llm_score"] == -2.0 and graded.ranking_scores["inference_llm_score"] == -2.0

    model = Scripted({("Oak Island", "Nova Scotia")}, difficulty="3 or 4", closeness="seven")
    graded = await grade_item(
        _item("Nova Scotia"), model, EntailmentEvaluatorConfig(inference_llm_score=True, llm_score=True)
    )
    assert graded.partial_marks["inference_llm_score"] is None and graded.partial_marks["llm_score"] is None
    assert graded.partial_marks["CIA"] is not None
    assert sorted(f.parser for f in graded.failures) == ["score", "score"]


async def test_no_rating_without_an_explanation_reply() -> None:
    model = Scripted({("Oak Island", "Nova Scotia")}, explanation="   ")
    graded = await grade_item(_item("Nova Scotia"), model, EntailmentEvaluatorConfig(inference_llm_score=True))
    assert model.count("inference_explanation") == 1 and model.count("inference_score") == 0
    assert graded.partial_marks["inference_llm_score"] is None and graded.ranking_scores["inference_llm_score"] is None


async def test_explanation_failure_is_recorded_against_the_step_schemes_only() -> None:
    model, events = Scripted({("Oak Island", "Nova Scotia")}, explanation="It just follows."), Events()
    config = EntailmentEvaluatorConfig(inference_llm_score=True)
    await grade_item(_item("Nova Scotia"), model, config, on_event=events)
    (failure,) = events.of("parse_failure")
    assert failure["step"] == "explanation" and failure["schemes"] == ["CIA", "C", "IA"]
    (explanation,) = events.of("explanation")
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
    config = EntailmentEvaluatorConfig(inference_llm_score=True, llm_score=True)
    graded = await grade_item(_item("Nova Scotia"), model, config)
    assert (graded.partial_marks["inference_llm_score"], graded.partial_marks["llm_score"]) == marks


async def test_llm_score_sign_of_the_authors_notebook() -> None:
    relation = {("Oak Island", "Nova Scotia")}
    config = EntailmentEvaluatorConfig(explain=False, llm_score=True)
    closeness = await grade_item(_item("Nova Scotia"), Scripted(relation, closeness="5"), config)
    negated = await grade_item(
        _item("Nova Scotia"), Scripted(relation, closeness="5"), config.model_copy(update={"llm_score_sign": "negated"})
    )
    assert closeness.ranking_scores["llm_score"] == 5.0 and negated.ranking_scores["llm_score"] == -5.0


async def test_llm_score_population_follows_explain_cells() -> None:
    # The released baseline-scoring.py scores both one-directional cells; here that is explain_cells with A_sup − A_inf.
    relation = {("on Oak Island off Nova Scotia", "Oak Island")}
    default = EntailmentEvaluatorConfig(explain=False, llm_score=True)
    both = default.model_copy(update={"explain_cells": (HierarchyCell.INF_ONLY, HierarchyCell.SUP_ONLY)})
    model = Scripted(relation)
    graded = await grade_item(_item("on Oak Island off Nova Scotia"), model, default)
    assert graded.cell is HierarchyCell.SUP_ONLY and model.count("llm_score") == 0 and graded.llm_score is None
    model = Scripted(relation)
    graded = await grade_item(_item("on Oak Island off Nova Scotia"), model, both)
    assert model.count("llm_score") == 1 and graded.ranking_scores["llm_score"] == 4.0


async def test_empty_answer_and_no_gold() -> None:
    model = Scripted(set())
    empty = await grade_item(_item("  "), model)
    assert empty.cell is HierarchyCell.NEITHER and empty.judgment is False and model.calls == []
    assert empty.ranking_scores["CIA"] == BOTTOM_TIER  # still ranked (lowest) for AUROC
    no_gold = await grade_item(_item("x", golds=("", " ")), model)
    assert no_gold.cell is None and no_gold.judgment is None and model.calls == []


async def test_roles_and_max_gold_answers() -> None:
    config = EntailmentEvaluatorConfig(max_gold_answers=1, roles={"qa2d": "converter", "entailment": "nli-judge"})
    model = Scripted(set())
    graded = await grade_item(_item("x", golds=("a", "b")), model, config)
    assert graded.gold_answers == ["a"]
    assert {(r, p) for r, p, _ in model.calls} == {("converter", "qa2d"), ("nli-judge", "entailment")}


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
    graded = await grade_item(_item("Hawaii"), model, EntailmentEvaluatorConfig(backend="nli"), entailment=backend)
    assert graded.cell is HierarchyCell.BOTH and model.count("entailment") == 0 and len(backend.pairs) == 2
    assert graded.entailment_calls[0].backend == "nli"
    with pytest.raises(ValueError, match="nli"):
        await grade_item(_item("Hawaii"), model, EntailmentEvaluatorConfig(backend="nli"))
    with pytest.raises(ValueError, match="nli_model"):
        make_entailment_backend(EntailmentEvaluatorConfig(backend="nli"), model)


async def test_partial_mark_aurocs() -> None:
    config = EntailmentEvaluatorConfig(inference_llm_score=True)
    relation = {("Oak Island", "Nova Scotia"), ("Oak Island", "Canada")}
    graded = [
        await grade_item(_item("Oak Island", human=True, i=1), Scripted(relation), config),  # top tier
        await grade_item(_item("Nova Scotia", human=True, i=2), Scripted(relation, difficulty="1"), config),
        await grade_item(_item("Canada", human=False, i=3), Scripted(relation, difficulty="5"), config),
        await grade_item(_item("Hawaii", human=False, i=4), Scripted(relation), config),  # bottom tier
        await grade_item(_item("Oak Island", human=None, i=5), Scripted(relation), config),  # unjudged: ignored
    ]
    aurocs = partial_mark_aurocs(graded)
    assert aurocs["inference_llm_score"].auroc == 1.0 and aurocs["inference_llm_score"].n == 4
    # CIA ties the two explained answers (same explanation): one tied positive/negative pair counts 1/2.
    assert aurocs["CIA"].auroc == pytest.approx(3.5 / 4)
    assert aurocs["token_f1"].n == 4 and aurocs["token_f1"].n_left_out == 0
