"""The entailment evaluator as a voirdire protocol, through ``run_protocol`` with a scripted evaluator model: every
hierarchy cell end to end with its transcript, both decision variants, each partial-mark scheme, malformed replies,
shared gold statements, resume, and the model-free baselines as deterministic protocols."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from autogen_core.models import AssistantMessage, UserMessage

from tests.qa_entailment.qae_helpers import (
    CELLS,
    EXPLANATION,
    GOLD,
    QUESTION,
    evaluator_script,
    statement,
)
from voirdire.models import ScriptedChatCompletionClient
from voirdire.protocols.qa_entailment.data import QAItem
from voirdire.protocols.qa_entailment.hierarchy import HierarchyCell
from voirdire.protocols.qa_entailment.protocol import (
    LexicalMatchGrading,
    QAEntailmentGrading,
    QAEntailmentParams,
    TokenF1Grading,
)
from voirdire.runner import run_protocol
from voirdire.transcript import Message, ModelCall, ParseFailure, SessionRecord, Step, Transition, Verdict, load


def item(answer: str, *, system: str = "sys", human: bool | None = True, golds: tuple[str, ...] = (GOLD,)) -> QAItem:
    return QAItem(
        id=f"q-{system}",
        question=QUESTION,
        gold_answers=golds,
        system=system,
        system_answer=answer,
        human_judgment=human,
    )


async def grade(
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
    result, sessions = await grade(tmp_path, [item(answer)], client, params)
    assert not result.errors
    s = sessions["q-sys"]
    explained = cell is HierarchyCell.INF_ONLY

    # States of §3 in order; the explanation step only for A_inf − A_sup (App. D).
    states = [e.to_state for e in s.of_kind(Transition)]
    assert states == ["qa2d", "entailment", "hierarchy", *(["partial_marks"] if explained else [])]

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
    _, sessions = await grade(tmp_path, [item(answer)], client, QAEntailmentParams(decision="minus", explain=False))
    v = sessions["q-sys"].verdict
    assert v is not None and v.decision == "incorrect" and v.accepted is False
    assert v.statistics["judgments"] == {"union": True, "minus": False}
    assert v.statistics["decision_variant"] == "minus"
    assert not steps(sessions["q-sys"], "explanation")  # partial marks off: no Table 17 call


async def test_each_partial_mark_scheme(tmp_path: Path) -> None:
    answer, entails = CELLS[HierarchyCell.INF_ONLY]
    client = ScriptedChatCompletionClient(evaluator_script([answer], entails, difficulty="4", closeness="2"))
    params = QAEntailmentParams(inference_llm_score=True, llm_score=True)
    _, sessions = await grade(tmp_path, [item(answer)], client, params)
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
    _, sessions = await grade(tmp_path, [item(answer)], ScriptedChatCompletionClient(script))
    s = sessions["q-sys"]
    (failure,) = s.of_kind(ParseFailure)
    assert failure.role == "evaluator" and failure.prompt == "qa_entailment/entailment"
    assert failure.raw == "Not entailment, I think." and "first line" in failure.error
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
    _, sessions = await grade(tmp_path, [item(answer)], client, QAEntailmentParams(inference_llm_score=True))
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
    _, sessions = await grade(tmp_path, [item(answer)], ScriptedChatCompletionClient(script))
    s = sessions["q-sys"]
    (failure,) = s.of_kind(ParseFailure)
    assert failure.prompt == "qa_entailment/qa2d" and "no entailment test" in failure.outcome
    assert not steps(s, "entailment") and len(s.of_kind(ModelCall)) == 1
    assert s.verdict is not None and s.verdict.decision == "undetermined"


async def test_gold_statements_are_shared_across_sessions_and_runs_resume(tmp_path: Path) -> None:
    items = [item("Stoker", system="a"), item("Mary Shelley", system="b")]
    client = ScriptedChatCompletionClient(evaluator_script(["Stoker", "Mary Shelley"], set()))
    result, sessions = await grade(tmp_path, items, client)
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
    _, sessions = await grade(tmp_path, [item("  ", human=False)], client)
    v = sessions["q-sys"].verdict
    assert v is not None and v.decision == "incorrect" and v.statistics["cell"] == HierarchyCell.NEITHER.value
    assert client.seen == [] and "empty system answer" in v.statistics["note"]


async def test_a_broken_session_is_an_error_and_the_run_goes_on(tmp_path: Path) -> None:
    # No rule for "Jane Austen": the scripted model runs out of replies in that session only.
    client = ScriptedChatCompletionClient(evaluator_script(["Bram Stoker"], set()))
    items = [item("Jane Austen", system="a"), item("Bram Stoker", system="b")]
    result, sessions = await grade(tmp_path, items, client)
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
    from tests.qa_entailment.tiny_nli import NLI_LABELS, build_cross_encoder

    model = build_cross_encoder(tmp_path / "nli", NLI_LABELS, favour=1)  # always "entailment"
    answer = "Mary Shelley"
    client = ScriptedChatCompletionClient(evaluator_script([answer], set()))
    params = QAEntailmentParams(backend="nli", nli_model=str(model))
    result, sessions = await grade(tmp_path, [item(answer)], client, params)
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
    from tests.qa_entailment.tiny_nli import build_cross_encoder

    model = build_cross_encoder(tmp_path / "nli", {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}, favour=2)
    params = QAEntailmentParams(
        backend="nli", nli_model=str(model), nli_labels=("entailment", "contradiction", "neutral")
    )
    backend = QAEntailmentGrading(params).entailment_backend()
    assert backend is not None and (await backend.entail("a", "b")).label == "neutral"
    bad = QAEntailmentParams(backend="nli", nli_model=str(model), nli_labels=("entailment", "entailment", "neutral"))
    with pytest.raises(ValueError, match="once each"):
        QAEntailmentGrading(bad).entailment_backend()


# ----------------------------------------------------------------------------------------- baselines


async def test_lexical_and_f1_baselines_leave_a_transcript(tmp_path: Path) -> None:
    items = [item("It was Bram Stoker.", system="a"), item("Stoker", system="b", human=False)]
    lex = await run_protocol(LexicalMatchGrading(), items, out=tmp_path / "lex.jsonl")
    assert {k: v.accepted for k, v in lex.verdicts.items()} == {"q-a": True, "q-b": False}
    s = load(tmp_path / "lex.jsonl").sessions["q-a"]
    (note,) = s.of_kind(Step)
    assert note.name == "lexical_match" and note.data["matched_gold"] == GOLD
    assert note.data["normalized_answer"] == "it was bram stoker"
    assert s.verdict is not None and s.verdict.statistics["agrees_with_human"] is True
    assert not s.of_kind(ModelCall) and not s.of_kind(Message)
    assert load(tmp_path / "lex.jsonl").header.roles == {}  # type: ignore[union-attr]

    f1 = await run_protocol(TokenF1Grading(), items, out=tmp_path / "f1.jsonl")
    # "Stoker" vs "Bram Stoker": P 1, R 1/2, F1 2/3 >= 0.5; "It was Bram Stoker." F1 = 2*(2/4*1)/(2/4+1) = 2/3.
    assert {k: v.accepted for k, v in f1.verdicts.items()} == {"q-a": True, "q-b": True}
    assert f1.verdicts["q-b"].statistics["f1"] == pytest.approx(2 / 3)
    assert f1.verdicts["q-b"].statistics["agrees_with_human"] is False
