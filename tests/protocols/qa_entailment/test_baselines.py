"""The model-free graders (Table 1 "Lexical Match", token F1) as one-step protocols: a transcript like the
entailment grader's, with no roles and no model calls."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.protocols.qa_entailment.helpers import GOLD, QUESTION
from voirdire.protocols.qa_entailment.baselines import LexicalMatchGrading, LexicalMatchParams, TokenF1Grading
from voirdire.protocols.qa_entailment.data import QAItem
from voirdire.runner import run_protocol
from voirdire.session.machine import StateMachine
from voirdire.transcript import Message, ModelCall, Step, Transition, load


def item(answer: str, *, system: str = "sys", human: bool | None = True) -> QAItem:
    return QAItem(
        id=f"q-{system}", question=QUESTION, gold_answers=(GOLD,), system=system, system_answer=answer,
        human_judgment=human,
    )  # fmt: skip


def test_one_step_machines() -> None:
    for cls in (LexicalMatchGrading, TokenF1Grading):
        assert cls.machine == StateMachine.chain("match") and cls.roles == () and cls().required_roles() == ()
        assert cls.display.quiet_states == ("match",) and cls.display.gold_fields == ("gold_answers",)


async def test_empty_gold_pieces_match_unless_skipped(tmp_path: Path) -> None:
    golds = QAItem(id="x", question="blood type", gold_answers=("A+", "AB+"), system="s", system_answer="O-positive")
    plain = await run_protocol(LexicalMatchGrading(), [golds], out=tmp_path / "a.jsonl")
    skip = await run_protocol(
        LexicalMatchGrading(LexicalMatchParams(skip_empty_gold=True)), [golds], out=tmp_path / "b.jsonl"
    )
    assert plain.verdicts["x"].accepted is True and skip.verdicts["x"].accepted is False


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
    assert [e.to_state for e in s.of_kind(Transition)] == ["match"]  # the one-step machine
    assert load(tmp_path / "lex.jsonl").header.roles == {}  # type: ignore[union-attr]

    f1 = await run_protocol(TokenF1Grading(), items, out=tmp_path / "f1.jsonl")
    # "Stoker" vs "Bram Stoker": P 1, R 1/2, F1 2/3 >= 0.5; "It was Bram Stoker." F1 = 2*(2/4*1)/(2/4+1) = 2/3.
    assert {k: v.accepted for k, v in f1.verdicts.items()} == {"q-a": True, "q-b": True}
    assert f1.verdicts["q-b"].statistics["f1"] == pytest.approx(2 / 3)
    assert f1.verdicts["q-b"].statistics["agrees_with_human"] is False
