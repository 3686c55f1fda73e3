"""LMvLM in structured mode: the closed answers of §2 are asked through reply schemas and read from JSON."""

from __future__ import annotations

from pathlib import Path

from voirdire.models import RoleSettings, Script, ScriptedChatCompletionClient, ScriptRule
from voirdire.protocols.cross_examination import AreYouSure, ClaimItem, CrossExamination, CrossExaminationParams
from voirdire.runner import run_protocol
from voirdire.transcript import ModelCall, ParseFailure, load


def examiner(decision: str) -> ScriptedChatCompletionClient:
    return ScriptedChatCompletionClient(
        Script(
            rules=[
                ScriptRule(match="verify the correctness", reply="1. Where is it?"),
                ScriptRule(match="follow-up questions", reply='{"answer": "No"}'),
                ScriptRule(match="correct or incorrect", reply=decision),
            ]
        )
    )


def examinee() -> ScriptedChatCompletionClient:
    return ScriptedChatCompletionClient(
        Script(rules=[ScriptRule(match="regarding your claim", reply="In France."), ScriptRule(match=".", reply="No")])
    )


async def run(tmp_path: Path, decision: str, *, structured: bool, protocol: object = None) -> object:
    out = tmp_path / "t.jsonl"
    roles = {r: RoleSettings(model="scripted:x", structured=structured) for r in ("examiner", "examinee")}
    await run_protocol(
        protocol or CrossExamination(CrossExaminationParams()),
        [ClaimItem(id="c", claim="Paris is in France.")],
        out=out,
        roles=roles,
        clients={"examiner": examiner(decision), "examinee": examinee()},
        resume=False,
    )
    return load(out).sessions["c"]


async def test_structured_decisions_are_read_from_the_schema(tmp_path: Path) -> None:
    s = await run(tmp_path, '{"answer": "correct"}', structured=True)
    assert s.verdict.decision == "correct" and s.of_kind(ParseFailure) == []  # type: ignore[attr-defined]
    calls = s.of_kind(ModelCall)  # type: ignore[attr-defined]
    # setup questions stay free text; the Yes/No and the decision were asked through schemas
    assert [c.enforcement for c in calls if c.role == "examiner"] == [None, "validated", "validated"]


async def test_a_free_text_decision_in_structured_mode_is_a_parse_failure(tmp_path: Path) -> None:
    s = await run(tmp_path, "The claim is correct.", structured=True)
    assert s.verdict.decision == "inconclusive"  # type: ignore[attr-defined]
    (failure,) = s.of_kind(ParseFailure)  # type: ignore[attr-defined]
    assert failure.expected == "'correct' or 'incorrect'" and "expected one of" in failure.error


async def test_paper_mode_reads_the_same_reply_as_text(tmp_path: Path) -> None:
    s = await run(tmp_path, "The claim is correct.", structured=False)
    assert s.verdict.decision == "correct"  # type: ignore[attr-defined]


async def test_ays_in_structured_mode_reads_no_as_a_rejection(tmp_path: Path) -> None:
    s = await run(tmp_path, "", structured=True, protocol=AreYouSure(CrossExaminationParams()))
    assert s.verdict.decision == "incorrect" and s.verdict.accepted is False  # type: ignore[attr-defined]
