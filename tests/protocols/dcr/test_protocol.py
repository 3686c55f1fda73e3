"""Every path of Algorithm 1, driven by a scripted evaluator, converter and improver."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voirdire.protocols.dcr import DCR, DCRParams
from voirdire.transcript import Message, ParseFailure, Step, Transition

from .helpers import BAD, GOOD, S1, S2, S2_FIXED, SUMMARY, agents, amc, dce, item, rai, run


def states(session) -> list[str]:  # type: ignore[no-untyped-def]
    return [e.to_state for e in session.events if isinstance(e, Transition)]


def steps(session, name: str) -> list[dict]:  # type: ignore[no-untyped-def,type-arg]
    return [e.data for e in session.events if isinstance(e, Step) and e.name == name]


def failures(session) -> list[ParseFailure]:  # type: ignore[no-untyped-def]
    return [e for e in session.events if isinstance(e, ParseFailure)]


async def test_candidate_fixed_in_round_one(tmp_path: Path) -> None:
    t = await run(
        tmp_path,
        agents(
            evaluator=[dce((S1, GOOD), (S2, BAD)), dce((S1, GOOD), (S2_FIXED, GOOD))],
            converter=[amc(1, -1), amc(1, 1)],
            improver=rai((S1, S1), (S2, S2_FIXED)),
        ),
    )
    (s,) = t.sessions.values()
    assert states(s) == ["dce", "amc", "rai", "dce", "amc", "done"]
    v = s.verdict
    assert v is not None and v.decision == "consistent" and v.accepted is True
    st = v.statistics
    assert st["scores"] == [0.5, 1.0] and st["score"] == 1.0 and st["initial_score"] == 0.5
    assert st["candidate"] == f"{S1} {S2_FIXED}" and st["improved"] and st["rounds"] == 1
    assert st["stopped"] == "consistent" and st["unscored_candidate"] is None
    assert [h["round"] for h in st["history"]] == [0, 1]
    (diff,) = steps(s, "candidate_diff")
    assert diff["changed"] == [{"index": 1, "before": S2, "after": S2_FIXED}] and diff["unchanged"] == 1
    assert [d["score"] for d in steps(s, "score")] == [0.5, 1.0]
    assert v.evidence == [f"+1 {S1}: {GOOD}", f"+1 {S2_FIXED}: {GOOD}"]
    # the improver got the sentences with their reasons as Table 10's list of objects
    to_improver = [e for e in s.events if isinstance(e, Message) and e.receiver == "improver"]
    assert json.dumps(S2)[1:-1] in to_improver[0].content and "Sentences" in to_improver[0].content
    assert not failures(s)


async def test_still_inconsistent_after_m_rounds(tmp_path: Path) -> None:
    t = await run(
        tmp_path,
        agents(evaluator=dce((S1, GOOD), (S2, BAD)), converter=amc(1, -1), improver=rai((S1, S1), (S2, S2))),
        rounds=2,
    )
    (s,) = t.sessions.values()
    assert states(s) == ["dce", "amc", "rai", "dce", "amc", "rai", "dce", "amc", "done"]
    v = s.verdict
    assert v is not None and v.decision == "inconsistent" and v.accepted is False
    assert v.statistics["scores"] == [0.5, 0.5, 0.5] and v.statistics["rounds"] == 2
    assert v.statistics["stopped"] == "max_rounds"
    assert [d["changed"] for d in steps(s, "candidate_diff")] == [[], []]


async def test_evaluation_only_needs_no_improver(tmp_path: Path) -> None:
    clients = agents(evaluator=dce((S1, GOOD), (S2, BAD)), converter=amc(1, -1))
    del clients["improver"]
    t = await run(tmp_path, clients, rounds=0)
    (s,) = t.sessions.values()
    assert states(s) == ["dce", "amc", "done"]
    assert s.verdict is not None and s.verdict.statistics["score"] == 0.5


async def test_malformed_dce_json_is_a_parse_failure_and_unscored(tmp_path: Path) -> None:
    t = await run(tmp_path, agents(evaluator='{"reason": [{"sentence": "x", "reason": ', converter=amc(1)))
    (s,) = t.sessions.values()
    assert states(s) == ["dce", "done"]
    (f,) = failures(s)
    assert f.role == "evaluator" and f.prompt == "dcr/dce_summarization" and "loop stops" in f.outcome
    v = s.verdict
    assert v is not None and v.decision == "unscored" and v.accepted is None
    assert v.statistics["score"] is None and v.statistics["stopped"] == "dce_unreadable"
    assert v.statistics["candidate"] == SUMMARY


async def test_dce_reply_missing_a_field_is_a_parse_failure(tmp_path: Path) -> None:
    t = await run(
        tmp_path, agents(evaluator=json.dumps({"reason": [{"sentence": S1, "reason": GOOD}]}), converter=amc(1))
    )
    (s,) = t.sessions.values()
    assert "is_consistent" in failures(s)[0].error and s.verdict is not None and s.verdict.decision == "unscored"


async def test_unreadable_re_evaluation_keeps_the_last_scored_candidate(tmp_path: Path) -> None:
    t = await run(
        tmp_path,
        agents(
            evaluator=[dce((S1, GOOD), (S2, BAD)), "I think it is fine now."],
            converter=amc(1, -1),
            improver=rai((S1, S1), (S2, S2_FIXED)),
        ),
    )
    (s,) = t.sessions.values()
    v = s.verdict
    assert v is not None and v.decision == "inconsistent" and v.statistics["score"] == 0.5
    assert v.statistics["candidate"] == SUMMARY and v.statistics["unscored_candidate"] == f"{S1} {S2_FIXED}"
    assert v.statistics["rounds"] == 1 and v.statistics["stopped"] == "dce_unreadable"


async def test_amc_array_shorter_than_the_reasons(tmp_path: Path) -> None:
    t = await run(tmp_path, agents(evaluator=dce((S1, GOOD), (S2, BAD)), converter=amc(-1)))
    (s,) = t.sessions.values()
    assert states(s) == ["dce", "amc", "done"]
    (f,) = failures(s)
    assert f.role == "converter" and "answer" in f.error and "2 marks" in f.expected
    v = s.verdict
    assert v is not None and v.decision == "unscored" and v.statistics["stopped"] == "amc_unreadable"


async def test_amc_array_as_returned_is_the_authors_code_reading_and_never_accepted(tmp_path: Path) -> None:
    t = await run(
        tmp_path, agents(evaluator=dce((S1, GOOD), (S2, BAD)), converter=amc(1)), amc_length="as-returned", rounds=1
    )
    (s,) = t.sessions.values()
    assert states(s) == ["dce", "amc", "done"]  # no RAI: which sentence was flagged is unknown
    (f,) = failures(s)
    assert f.role == "converter" and f.error == "1 marks for 2 reasons" and "not accepted" in f.outcome
    v = s.verdict
    assert v is not None and v.decision == "unscored" and v.accepted is None
    st = v.statistics
    assert st["score"] == 1.0 and st["amc_complete"] is False  # sum(answer) / len(answer), rescaled, kept
    assert st["stopped"] == "amc_incomplete"
    assert "warning: AMC returned 1 marks for 2 reasons: scored as returned, not accepted" in v.evidence


async def test_rai_returning_only_the_rewritten_sentence_loses_the_other(tmp_path: Path) -> None:
    t = await run(
        tmp_path,
        agents(
            evaluator=[dce((S1, GOOD), (S2, BAD)), dce((S2_FIXED, GOOD))],
            converter=[amc(1, -1), amc(1)],
            improver=rai((S2, S2_FIXED)),  # only the sentence it rewrote: S1, judged consistent, is gone
        ),
    )
    (s,) = t.sessions.values()
    assert states(s) == ["dce", "amc", "rai", "done"]  # the improved candidate is never evaluated
    first, lost = failures(s)
    assert first.role == "improver" and first.prompt == "dcr/rai_sentence"
    assert first.error == f"1 entries for 2 sentences: no entry for {S1!r}"
    assert lost.error == f"lost (left out): {S1!r}" and "not consistent" in lost.outcome
    (diff,) = steps(s, "candidate_diff")
    assert diff["after"] == S2_FIXED and diff["lost"] == [S1]
    v = s.verdict
    assert v is not None and v.decision == "inconsistent" and v.accepted is False
    assert v.statistics["stopped"] == "rai_lost_sentence" and v.statistics["candidate"] == SUMMARY
    assert v.statistics["unscored_candidate"] == S2_FIXED and v.statistics["lost_sentences"] is True
    assert f"lost (left out, round 1): {S1}" in v.evidence


async def test_app_a4_paragraph_reason_left_out_of_eq3_and_of_rai(tmp_path: Path) -> None:
    t = await run(
        tmp_path,
        agents(
            evaluator=dce((SUMMARY, "The two paragraphs are not consistent."), (S1, GOOD), (S2, BAD)),
            converter=amc(-1, 1, -1),
            improver=rai((S1, S1), (S2, S2_FIXED)),
        ),
        rounds=1,
        alpha_beta="sentence-level",
    )
    (s,) = t.sessions.values()
    (score, *_) = steps(s, "score")
    assert (score["alpha"], score["beta"], score["score"]) == (1, -1, 0.5)
    to_improver = next(e for e in s.events if isinstance(e, Message) and e.receiver == "improver")
    assert "two paragraphs" not in to_improver.content


async def test_alpha_beta_zero_counts_every_reason(tmp_path: Path) -> None:
    t = await run(
        tmp_path,
        agents(
            evaluator=dce((SUMMARY, "The two paragraphs are not consistent."), (S1, GOOD), (S2, BAD)),
            converter=amc(-1, 1, -1),
        ),
        rounds=0,
        alpha_beta="zero",
    )
    (s,) = t.sessions.values()
    assert s.verdict is not None and s.verdict.statistics["score"] == pytest.approx(1 / 3)


async def test_only_paragraph_level_reasons_leave_the_candidate_unscored(tmp_path: Path) -> None:
    reply = dce((SUMMARY, "The two paragraphs are not consistent."))
    t = await run(tmp_path, agents(evaluator=reply, converter=amc(-1)), alpha_beta="sentence-level")
    (s,) = t.sessions.values()
    assert states(s) == ["dce", "done"]
    assert "App. A.4" in failures(s)[0].expected
    assert s.verdict is not None and s.verdict.statistics["stopped"] == "no_sentence_reason"


async def test_a_reason_about_no_sentence_is_a_mismatch(tmp_path: Path) -> None:
    t = await run(tmp_path, agents(evaluator=dce(("", "The two paragraphs are not consistent.")), converter=amc(-1)))
    (s,) = t.sessions.values()
    assert states(s) == ["dce", "done"]
    (f,) = failures(s)
    assert "does not have" in f.error and "nothing left to score" in f.outcome
    assert s.verdict is not None and s.verdict.decision == "unscored"
    assert s.verdict.statistics["stopped"] == "reasons_not_in_candidate"


async def test_paragraph_level(tmp_path: Path) -> None:
    evaluator = [
        json.dumps(
            {"reason": {"sentence": SUMMARY, "reason": "This summary is not consistent."}, "is_consistent": False}
        ),
        json.dumps({"reason": {"sentence": "x", "reason": "This summary is consistent."}, "is_consistent": True}),
    ]
    improver = json.dumps({"sentence": SUMMARY, "improved_summary": f"{S1} {S2_FIXED}", "reason": "fixed"})
    t = await run(tmp_path, agents(evaluator, [amc(-1), amc(1)], improver), level="paragraph")
    (s,) = t.sessions.values()
    prompts = [e.prompt for e in s.events if isinstance(e, Message) and e.sender == "moderator"]
    assert prompts == ["dcr/dce_paragraph", "dcr/amc", "dcr/rai_paragraph", "dcr/dce_paragraph", "dcr/amc"]
    assert s.verdict is not None and s.verdict.statistics["scores"] == [0.0, 1.0]
    assert s.verdict.statistics["candidate"] == f"{S1} {S2_FIXED}"


async def test_semantic_task_from_the_item(tmp_path: Path) -> None:
    t = await run(
        tmp_path,
        {**agents(evaluator=dce(("How do I start?", GOOD)), converter=amc(1))},
        items=[item("How do I start?", id="q", task="semantic")],
    )
    (s,) = t.sessions.values()
    first = next(e for e in s.events if isinstance(e, Message) and e.receiver == "evaluator")
    assert first.prompt == "dcr/dce_semantic" and "## True Answer ##" in first.content
    assert s.verdict is not None and s.verdict.statistics["task"] == "semantic"


def test_paragraph_level_semantic_is_refused() -> None:
    with pytest.raises(ValueError, match="Tables 11-12"):
        DCRParams(level="paragraph", task="semantic")


def test_machine_and_roles() -> None:
    assert DCR.machine.allows("rai", "dce") and not DCR.machine.allows("dce", "rai")
    assert DCR.roles == ("evaluator", "converter", "improver")
    assert DCR(DCRParams(rounds=0)).required_roles() == ("evaluator", "converter")
