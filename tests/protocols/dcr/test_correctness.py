"""DCR never loses a sentence nobody flagged, reads "U.S." as part of a sentence, and does not score reasons about
sentences the candidate does not have (issue 18's scripted cases)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from voirdire.protocols.dcr import DCRItem, DCRParams
from voirdire.protocols.dcr.cli import PARAMS, rounds_text
from voirdire.registry.flags import add_params_options, given_params
from voirdire.transcript import Message, ParseFailure, Step

from .helpers import agents, amc, dce, rai, run

REFERENCE = (
    "The bridge opened in 1932 and carries six lanes. It was designed by Anna Berg. The U.S. Army used it in 1944."
)
OPENED, EIGHT, BERG = "The bridge opened in 1932.", "It carries eight lanes.", "Anna Berg designed it."
SIX = "It carries six lanes."
ARMY = "The U.S. Army used it in 1944."
CANDIDATE = f"{OPENED} {EIGHT} {BERG}"
GOOD = "This sentence is consistent with the article."
BAD = "This sentence is not consistent with the article: the bridge carries six lanes."


def bridge(candidate: str = CANDIDATE) -> DCRItem:
    return DCRItem(id="bridge", reference=REFERENCE, candidate=candidate)


def steps(session, name: str) -> list[dict]:  # type: ignore[no-untyped-def,type-arg]
    return [e.data for e in session.events if isinstance(e, Step) and e.name == name]


def failures(session) -> list[ParseFailure]:  # type: ignore[no-untyped-def]
    return [e for e in session.events if isinstance(e, ParseFailure)]


async def test_a_sentence_the_evaluator_did_not_list_is_kept_and_counted_against(tmp_path: Path) -> None:
    t = await run(
        tmp_path,
        agents(
            # never lists "Anna Berg designed it."
            evaluator=[dce((OPENED, GOOD), (EIGHT, BAD)), dce((OPENED, GOOD), (SIX, GOOD))],
            converter=[amc(1, -1), amc(1, 1)],
            improver=rai((OPENED, OPENED), (EIGHT, SIX)),
        ),
        items=[bridge()],
        rounds=1,
    )
    (s,) = t.sessions.values()
    v = s.verdict
    assert v is not None
    st = v.statistics
    # the improver rewrote the flagged sentence; the unlisted one stays verbatim, in place
    assert st["candidate"] == f"{OPENED} {SIX} {BERG}" != f"{OPENED} {SIX}"
    # not evaluated is z = -1 in Eq. 3: round 0 (1 - 1 - 1) / 3, round 1 (1 + 1 - 1) / 3, rescaled
    assert st["scores"] == pytest.approx([1 / 3, 2 / 3])
    assert v.decision == "inconsistent" and st["stopped"] == "max_rounds"
    assert st["not_evaluated"] == [BERG] and f"not evaluated, counted -1: {BERG}" in v.evidence
    assert (st["sentences_start"], st["sentences_end"], st["lost_sentences"]) == (3, 3, False)
    first, _ = steps(s, "evaluation")
    assert first["sentences"] == [OPENED, EIGHT, BERG] and first["not_evaluated"] == [2]
    assert first["reason_status"] == ["scored", "scored"] and first["reason_sentences"] == [[0], [1]]
    score, _ = steps(s, "score")
    assert (score["k"], score["not_evaluated"]) == (2, 1)
    assert [row["status"] for row in score["sentence_table"]] == ["consistent", "inconsistent", "not evaluated"]
    (diff,) = steps(s, "candidate_diff")
    assert diff["kept"] == [BERG] and diff["after"] == f"{OPENED} {SIX} {BERG}"
    assert diff["changed"] == [{"index": 1, "before": EIGHT, "after": SIX}]
    to_improver = next(e for e in s.events if isinstance(e, Message) and e.receiver == "improver")
    assert BERG not in to_improver.content  # nobody flagged it, so nobody rewrites it
    printed = rounds_text(st)  # what `voirdire dcr` prints after the chat
    assert f"  -1 {BERG} (not evaluated)" in printed and f"improved candidate: {OPENED} {SIX} {BERG}" in printed


async def test_listed_in_the_next_round_it_is_scored(tmp_path: Path) -> None:
    t = await run(
        tmp_path,
        agents(
            evaluator=[dce((OPENED, GOOD), (EIGHT, BAD)), dce((OPENED, GOOD), (SIX, GOOD), (BERG, GOOD))],
            converter=[amc(1, -1), amc(1, 1, 1)],
            improver=rai((OPENED, OPENED), (EIGHT, SIX)),
        ),
        items=[bridge()],
    )
    (s,) = t.sessions.values()
    assert s.verdict is not None and s.verdict.decision == "consistent"
    assert s.verdict.statistics["candidate"] == f"{OPENED} {SIX} {BERG}"
    assert s.verdict.statistics["scores"] == pytest.approx([1 / 3, 1.0])


@pytest.mark.parametrize("alpha_beta", ["zero", "sentence-level"])
async def test_an_abbreviation_does_not_split_a_sentence(tmp_path: Path, alpha_beta: str) -> None:
    t = await run(
        tmp_path,
        agents(evaluator=dce((ARMY, GOOD)), converter=amc(1)),
        items=[bridge(ARMY)],
        rounds=0,
        alpha_beta=alpha_beta,
    )
    (s,) = t.sessions.values()
    (evaluation,) = steps(s, "evaluation")
    assert evaluation["sentences"] == [ARMY] and evaluation["sentence_level"] == [True]
    assert s.verdict is not None and s.verdict.statistics["score"] == 1.0 and not failures(s)


async def test_an_abbreviation_sentence_is_kept_through_an_improvement(tmp_path: Path) -> None:
    candidate = f"{EIGHT} {ARMY}"
    t = await run(
        tmp_path,
        agents(
            evaluator=[dce((EIGHT, BAD), (ARMY, GOOD)), dce((SIX, GOOD), (ARMY, GOOD))],
            converter=[amc(-1, 1), amc(1, 1)],
            improver=rai((EIGHT, SIX), (ARMY, ARMY)),
        ),
        items=[bridge(candidate)],
        alpha_beta="sentence-level",  # the A.4 check no longer reads "U.S." as two sentences
    )
    (s,) = t.sessions.values()
    v = s.verdict
    assert v is not None and v.statistics["scores"] == [0.5, 1.0]
    assert v.statistics["candidate"] == f"{SIX} {ARMY}"
    assert [st["reason_status"] for st in steps(s, "evaluation")] == [["scored", "scored"]] * 2


async def test_reasons_about_sentences_not_in_the_candidate_are_a_mismatch_not_a_score(tmp_path: Path) -> None:
    elsewhere = dce(("The sky is blue.", GOOD), ("Water is wet.", GOOD), ("Paris is in France.", GOOD))
    t = await run(tmp_path, agents(evaluator=elsewhere, converter=amc(1, 1, 1)), items=[bridge(ARMY)])
    (s,) = t.sessions.values()
    v = s.verdict
    assert v is not None and v.decision == "unscored" and v.statistics["score"] is None
    assert v.statistics["stopped"] == "reasons_not_in_candidate"
    (f,) = failures(s)
    assert f.role == "evaluator" and f.error.count("does not have") == 3 and "Water is wet." in f.error
    assert "nothing left to score" in f.outcome
    (evaluation,) = steps(s, "evaluation")
    assert evaluation["reason_status"] == ["not_in_candidate"] * 3 and evaluation["not_evaluated"] == [0]
    assert "     Water is wet. (not in the candidate: not scored)" in rounds_text(v.statistics)
    assert not [e for e in s.events if isinstance(e, Message) and e.receiver == "converter"]  # nothing to mark


async def test_a_stray_reason_beside_real_ones_is_recorded_and_left_out(tmp_path: Path) -> None:
    t = await run(
        tmp_path,
        agents(
            evaluator=dce((OPENED, GOOD), ("The sky is blue.", BAD), (EIGHT, GOOD), (BERG, GOOD)),
            converter=amc(1, 1, 1),
        ),
        items=[bridge()],
    )
    (s,) = t.sessions.values()
    v = s.verdict
    assert v is not None and v.statistics["score"] == 1.0  # the three sentences, each marked once
    (f,) = failures(s)
    assert "reason 2 is about a sentence the candidate does not have" in f.error
    to_converter = next(e for e in s.events if isinstance(e, Message) and e.receiver == "converter")
    assert BAD not in to_converter.content
    assert "not in the candidate, not scored: 'The sky is blue.'" in v.evidence[1]
    (score,) = steps(s, "score")
    assert score["marks"] == [1, None, 1, 1]


async def test_a_repeated_sentence_is_not_scored_twice(tmp_path: Path) -> None:
    t = await run(
        tmp_path,
        agents(evaluator=dce((OPENED, GOOD), (OPENED, GOOD), (EIGHT, BAD)), converter=amc(1, -1)),
        items=[bridge()],
        rounds=0,
    )
    (s,) = t.sessions.values()
    (evaluation,) = steps(s, "evaluation")
    assert evaluation["reason_status"] == ["scored", "repeated", "scored"]
    # the repeat is neither marked nor counted; "Anna Berg designed it." is not evaluated: (1 - 1 - 1) / 3
    assert s.verdict is not None and s.verdict.statistics["score"] == pytest.approx(1 / 3)


async def test_a_run_that_ends_with_fewer_sentences_says_so(tmp_path: Path) -> None:
    summary = json.dumps({"reason": {"sentence": CANDIDATE, "reason": "It is not consistent."}, "is_consistent": False})
    fixed = json.dumps({"reason": {"sentence": OPENED, "reason": "It is consistent."}, "is_consistent": True})
    improver = json.dumps({"sentence": CANDIDATE, "improved_summary": OPENED, "reason": "shortened"})
    t = await run(tmp_path, agents([summary, fixed], [amc(-1), amc(1)], improver), items=[bridge()], level="paragraph")
    (s,) = t.sessions.values()
    v = s.verdict
    assert v is not None and v.decision == "consistent" and v.statistics["candidate"] == OPENED
    assert (v.statistics["sentences_start"], v.statistics["sentences_end"], v.statistics["lost_sentences"]) == (
        3, 1, True,
    )  # fmt: skip
    assert "the final candidate has 1 sentences, the original 3: sentences were lost" in v.evidence


def test_alpha_beta_default_is_the_papers_and_a4_is_an_option() -> None:
    assert DCRParams().alpha_beta == "zero"  # §4.1: alpha = beta = 0 in the paper's experiments
    parser = argparse.ArgumentParser()
    add_params_options(parser, DCRParams, PARAMS)
    assert given_params(parser.parse_args(["--alpha-beta", "sentence-level"])) == {"alpha_beta": "sentence-level"}
    with pytest.raises(SystemExit):
        parser.parse_args(["--alpha-beta", "sometimes"])


async def test_a_long_candidate_is_cut_off_the_event_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from voirdire.protocols.dcr import protocol
    from voirdire.protocols.dcr.coverage import Candidate

    threads: list[str] = []

    class Recorded(Candidate):
        def __init__(self, text: str) -> None:
            threads.append(threading.current_thread().name)
            super().__init__(text)

    monkeypatch.setattr(protocol, "Candidate", Recorded)
    filler = " ".join(f"Span {i} opened in 1932." for i in range(300))
    assert len(filler) > protocol.LONG_REPLY_CHARS
    t = await run(
        tmp_path,
        agents(evaluator=[dce((OPENED, GOOD)), dce((OPENED, GOOD))], converter=amc(1)),
        items=[bridge(OPENED), bridge(f"{OPENED} {filler}").model_copy(update={"id": "long"})],
        rounds=0,
    )
    assert threads[0] == threading.current_thread().name and threads[1] != threads[0]
    long = t.sessions["long"].verdict
    assert long is not None and long.statistics["sentences_start"] == 301
    assert long.statistics["score"] == pytest.approx(1 / 301)  # one sentence marked +1, 300 not evaluated
