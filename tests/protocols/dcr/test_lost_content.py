"""DCR never accepts content it did not check: the improver's reply matched by content, sentences lost, removed and
rewritten against instructions named in the verdict and in ``voirdire show``, quotes that change a fact not located,
an incomplete AMC array never accepted (issue: "DCR never accepts lost or misquoted content")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voirdire.cli import main
from voirdire.protocols.dcr import DCRItem
from voirdire.protocols.dcr.coverage import Candidate, same_facts
from voirdire.protocols.dcr.rai import ImprovedSentence, align
from voirdire.transcript import ParseFailure, Step

from .helpers import BAD, GOOD, S1, S2, S2_FIXED, SUMMARY, agents, amc, dce, rai, run

S1_CHANGED = "Usain bolt will not compete at the relay championship ."
REFERENCE_FACTS = "The Golden Gate Bridge opened in 1937 . Its chief engineer was Joseph Strauss ."
YEAR = "The bridge opened in 1937 ."
NAME = "Its chief engineer was Strauss ."


def show(out: Path, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(["show", str(out)]) == 0
    return capsys.readouterr().out


def failures(session) -> list[ParseFailure]:  # type: ignore[no-untyped-def]
    return [e for e in session.events if isinstance(e, ParseFailure)]


def diffs(session) -> list[dict]:  # type: ignore[no-untyped-def,type-arg]
    return [e.data for e in session.events if isinstance(e, Step) and e.name == "candidate_diff"]


def entries(*pairs: tuple[str, str]) -> list[ImprovedSentence]:
    return [ImprovedSentence(sentence=s, improved_sentence=t, reason="r") for s, t in pairs]


# ---------------------------------------------------------------- align, by content
def test_a_repeated_entry_with_one_left_out_loses_that_sentence_not_replaces_it() -> None:
    a = align([S1, S2], entries((S2, S2_FIXED), (S2, S2_FIXED)), flagged=[False, True])
    assert a.sentences == ["", S2_FIXED] and a.lost == [0] and a.why == {0: "left out"}
    assert a.duplicated == [1] and not a.complete


def test_entries_in_another_order_pair_by_their_text() -> None:
    a = align([S1, S2], entries((S2, S2_FIXED), (S1, S1)), flagged=[False, True])
    assert a.sentences == [S1, S2_FIXED] and a.complete and not a.lost and not a.rewrote_consistent


def test_a_flagged_sentence_left_out_or_blanked_is_removed_an_unflagged_one_lost() -> None:
    a = align([S1, S2], entries((S1, "  "), (S2, "")), flagged=[False, True])
    assert a.lost == [0] and a.removed == [1] and a.why == {0: "blanked", 1: "blanked"}


def test_an_improved_sentence_repeating_a_kept_one_is_gone() -> None:
    a = align([S2], entries((S2, S1)), flagged=[False], kept=[S1])
    assert a.lost == [0] and a.why == {0: "replaced by a repeat of another sentence"}


def test_an_entry_with_a_slip_pairs_but_one_with_another_fact_does_not() -> None:
    slip = align([YEAR], entries(("The bridge opend in 1937 .", YEAR)), flagged=[False])
    assert slip.complete and slip.sentences == [YEAR]
    other = align([YEAR], entries(("The bridge opened in 1932 .", YEAR)), flagged=[False])
    assert other.unmatched == [0] and other.lost == [0]


# ---------------------------------------------------------------- quotes never turn one fact into another
@pytest.mark.parametrize(
    ("quote", "sentence"),
    [
        ("The bridge opened in 1932 .", YEAR),
        ("Its chief engineer was Strass .", NAME),
        ("Berg led the team in May .", "Borg led the team in May ."),
        ("It opened on May 27 .", "It opened on May 21 ."),
        ("The tower did collapse in the storm .", "The tower did not collapse in the storm ."),
        ("The tower collapsed in the storm .", "The tower never collapsed in the storm ."),
    ],
)
def test_a_quote_differing_in_a_fact_is_not_located(quote: str, sentence: str) -> None:
    assert not same_facts(quote, sentence)
    (loc,) = Candidate(f"{sentence} Nothing else happened .").locate([quote])
    assert loc.status == "not_in_candidate"


def test_a_quote_is_not_found_inside_a_word_or_a_number() -> None:
    cut = Candidate("Sales rose 15 percent in the quarter .")
    assert [x.status for x in cut.locate(["5 percent in the quarter"])] == ["not_in_candidate"]
    assert [x.status for x in cut.locate(["rose 15 percent"])] == ["scored"]


# ---------------------------------------------------------------- the acceptance cases, end to end
async def test_duplicated_improver_entry(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t = await run(
        tmp_path,
        agents(
            evaluator=[dce((S1, GOOD), (S2, BAD)), dce((S2_FIXED, GOOD))],
            converter=[amc(1, -1), amc(1)],
            improver=rai((S2, S2_FIXED), (S2, S2_FIXED)),  # same count: S2 twice, S1 left out
        ),
    )
    (s,) = t.sessions.values()
    v = s.verdict
    assert v is not None and v.decision != "consistent" and v.accepted is not True
    assert v.statistics["stopped"] == "rai_lost_sentence"
    assert f"lost (left out, round 1): {S1}" in v.evidence
    assert "entry 2 repeats a sentence another entry took" in failures(s)[0].error
    assert v.statistics["lost"] == [{"round": 1, "sentence": S1, "how": "left out"}]
    text = show(tmp_path / "dcr.jsonl", capsys)
    assert f"lost (left out, round 1): {S1}" in text and "rai_lost_sentence" in text


async def test_omitted_entry(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t = await run(
        tmp_path,
        agents(evaluator=dce((S1, GOOD), (S2, BAD)), converter=amc(1, -1), improver=rai((S2, S2_FIXED))),
    )
    (s,) = t.sessions.values()
    v = s.verdict
    assert v is not None and v.decision == "inconsistent" and v.accepted is False
    assert v.statistics["stopped"] == "rai_lost_sentence" and v.statistics["unscored_candidate"] == S2_FIXED
    assert f"lost (left out, round 1): {S1}" in show(tmp_path / "dcr.jsonl", capsys)


async def test_blanked_sentence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t = await run(
        tmp_path,
        agents(evaluator=dce((S1, GOOD), (S2, BAD)), converter=amc(1, -1), improver=rai((S1, " "), (S2, S2_FIXED))),
    )
    (s,) = t.sessions.values()
    v = s.verdict
    assert v is not None and v.accepted is not True and v.statistics["stopped"] == "rai_lost_sentence"
    assert f"lost (blanked, round 1): {S1}" in v.evidence
    assert diffs(s)[0]["after"] == S2_FIXED
    assert f"lost (blanked, round 1): {S1}" in show(tmp_path / "dcr.jsonl", capsys)


async def test_a_flagged_sentence_deleted_is_a_repair_named_removed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    t = await run(
        tmp_path,
        agents(
            evaluator=[dce((S1, GOOD), (S2, BAD)), dce((S1, GOOD))],
            converter=[amc(1, -1), amc(1)],
            improver=rai((S1, S1), (S2, "")),
        ),
    )
    (s,) = t.sessions.values()
    assert not failures(s)
    v = s.verdict
    assert v is not None and v.decision == "consistent" and v.statistics["candidate"] == S1
    assert v.statistics["lost_sentences"] is False
    assert f"removed (blanked, round 1): {S2}" in v.evidence
    assert diffs(s)[0]["removed"] == [S2]
    assert f"removed (blanked, round 1): {S2}" in show(tmp_path / "dcr.jsonl", capsys)


async def test_rewriting_a_consistent_sentence_is_recorded_and_warned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    t = await run(
        tmp_path,
        agents(
            evaluator=[dce((S1, GOOD), (S2, BAD)), dce((S1_CHANGED, GOOD), (S2_FIXED, GOOD))],
            converter=[amc(1, -1), amc(1, 1)],
            improver=rai((S1, S1_CHANGED), (S2, S2_FIXED)),
        ),
    )
    (s,) = t.sessions.values()
    v = s.verdict
    assert v is not None
    warning = f"warning: the improver rewrote a sentence judged consistent (round 1): {S1} → {S1_CHANGED}"
    assert warning in v.evidence and diffs(s)[0]["rewrote_consistent"] == [f"{S1} → {S1_CHANGED}"]
    text = show(tmp_path / "dcr.jsonl", capsys)
    assert "warning: the improver rewrote a sentence judged consistent (round 1)" in text
    assert "warning: rewrote a consistent sentence" in text


@pytest.mark.parametrize(
    ("quote", "kind"), [("The bridge opened in 1932 .", "year"), ("Its chief engineer was Strass .", "name")]
)
async def test_misquoted_year_and_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], quote: str, kind: str
) -> None:
    candidate = f"{YEAR} {NAME}"
    other = NAME if kind == "year" else YEAR
    t = await run(
        tmp_path,
        agents(evaluator=dce((quote, GOOD), (other, GOOD)), converter=amc(1)),
        items=[DCRItem(id="bridge", reference=REFERENCE_FACTS, candidate=candidate)],
        rounds=0,
    )
    (s,) = t.sessions.values()
    (f,) = failures(s)
    assert f.role == "evaluator" and "does not have" in f.error and json.dumps(quote)[1:-1] in f.error
    v = s.verdict
    assert v is not None and v.decision == "inconsistent" and v.accepted is False
    misquoted = YEAR if kind == "year" else NAME
    assert f"not evaluated, counted -1: {misquoted}" in v.evidence
    differs = "1932/1937" if kind == "year" else "Strass/Strauss"
    near = f" (nearest: sentence {1 if kind == 'year' else 2}, which differs in {differs})"
    assert f"not in the candidate, not scored: {quote!r}{near}: {GOOD}" in v.evidence
    assert near in f.error
    text = show(tmp_path / "dcr.jsonl", capsys)
    assert f"not evaluated, counted -1: {misquoted}" in text and "does not have" in text


async def test_short_amc_array_as_returned(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t = await run(
        tmp_path, agents(evaluator=dce((S1, GOOD), (S2, BAD)), converter=amc(1)), amc_length="as-returned"
    )
    (s,) = t.sessions.values()
    v = s.verdict
    assert v is not None and v.decision == "unscored" and v.accepted is None
    assert v.statistics["stopped"] == "amc_incomplete"
    text = show(tmp_path / "dcr.jsonl", capsys)
    assert "warning: AMC returned 1 marks for 2 reasons" in text and "amc_incomplete" in text


async def test_a_long_amc_array_as_returned_is_not_accepted_either(tmp_path: Path) -> None:
    t = await run(
        tmp_path, agents(evaluator=dce((S1, GOOD), (S2, GOOD)), converter=amc(1, 1, 1)), amc_length="as-returned"
    )
    (s,) = t.sessions.values()
    v = s.verdict
    assert v is not None and v.decision == "unscored" and v.statistics["score"] == 1.0
    assert failures(s)[0].error == "3 marks for 2 reasons"


async def test_a_blank_paragraph_level_rewrite_loses_the_summary(tmp_path: Path) -> None:
    evaluator = json.dumps(
        {"reason": {"sentence": SUMMARY, "reason": "This summary is not consistent."}, "is_consistent": False}
    )
    improver = json.dumps({"sentence": SUMMARY, "improved_summary": "  ", "reason": "removed"})
    t = await run(tmp_path, agents(evaluator, amc(-1), improver), level="paragraph")
    (s,) = t.sessions.values()
    (f,) = failures(s)
    assert f.role == "improver" and f.prompt == "dcr/rai_paragraph" and "lost (blanked)" in f.error
    v = s.verdict
    assert v is not None and v.accepted is False and v.statistics["stopped"] == "rai_lost_sentence"
    assert f"lost (blanked, round 1): {SUMMARY}" in v.evidence
