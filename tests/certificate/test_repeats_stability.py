"""The stability fold of a run with repeats (``voirdire.reports.stability``): per item the verdicts over its repeats,
decided or undecided at ``--decided-at``, the flip rate with its Wilson interval and the items that flip; the shared
report fold that gives it to every protocol; repeats read as one item by ``compare`` and ``calibrate``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.chaos.protocol import Chaos
from tests.core.test_workers import items
from tests.runner.test_repeats_runner import judge_in_turns
from voirdire.analysis.compare import CompareError, RunOverviews, by_item, compare_runs
from voirdire.certificate import wilson
from voirdire.certificate.stability import is_repeat, one_per_item
from voirdire.cli import main
from voirdire.reports import Overview, generic_report, majority, report_file, stability
from voirdire.reports.stability import NO_VERDICT, item_stability
from voirdire.runner import run_protocol
from voirdire.transcript import load


def sessions(item: str, *decisions: str | None) -> list[tuple[str, str, str | None]]:
    return [(f"{item}@r{r}", item, d) for r, d in enumerate(decisions, 1)]


@pytest.mark.parametrize(
    ("decisions", "decided_at", "majority_", "decided", "flips"),
    [
        (("yes",) * 5, 0.8, "yes", True, False),
        (("yes", "yes", "no", "yes", "yes"), 0.8, "yes", True, True),  # 4 of 5 = 0.8: decided at 0.8
        (("yes", "yes", "no", "yes", "yes"), 0.81, "yes", False, True),
        (("yes", "no", "no", "yes", "no"), 0.8, "no", False, True),  # 3 of 5
        (("yes", "no", "no", "yes", "no"), 0.6, "no", True, True),
        (("yes", "no", "yes", "no"), 0.51, None, False, True),  # a tie never decides
        (("yes", "no", "maybe"), 0.51, None, False, True),  # three ways, one each: a tie
    ],
)
def test_an_item_is_decided_when_one_verdict_holds_the_share(
    decisions: tuple[str, ...], decided_at: float, majority_: str | None, decided: bool, flips: bool
) -> None:
    item = item_stability("a", [(f"a@r{i}", d) for i, d in enumerate(decisions, 1)], decided_at)
    assert (item.majority, item.decided, item.flips) == (majority_, decided, flips)
    assert sum(item.verdicts.values()) == len(decisions)
    assert item.first[decisions[0]] == "a@r1"


def test_a_repeat_without_a_verdict_is_counted_apart_not_as_a_verdict() -> None:
    item = item_stability("a", [("a@r1", "yes"), ("a@r2", None), ("a@r3", "yes")], 0.8)
    assert item.verdicts == {"yes": 2, NO_VERDICT: 1} and item.judged == 2
    assert item.share == 1.0 and item.decided and not item.flips  # an error is not a flip
    assert item.first[NO_VERDICT] == "a@r2"


def test_the_flip_rate_is_over_items_with_wilsons_interval_from_the_certificate() -> None:
    rows = [*sessions("a", "yes", "yes", "yes"), *sessions("b", "yes", "no", "yes"), *sessions("c", "no", "no", "no"),
            *sessions("d", "no", "yes", "yes"), *sessions("e", "yes", None, None)]  # fmt: skip
    s = stability(rows, decided_at=0.8, level=0.9, transcript="runs/t.jsonl")
    assert s is not None
    assert (s.assessed, s.flipping, s.repeats) == (4, 2, 3)  # e has one verdict: not assessed
    expected = wilson("flip rate", 2, 4, level=0.9)  # the certificate's Wilson interval, the same numbers
    assert (s.flip_rate, s.flip_low, s.flip_high) == pytest.approx((0.5, expected.low, expected.high))
    assert s.undecided_items == ["b", "d"] and [f["item_id"] for f in s.flipping_items] == ["b", "d"]
    assert s.flipping_items[0]["commands"] == {
        "yes": "voirdire show runs/t.jsonl --session b@r1", "no": "voirdire show runs/t.jsonl --session b@r2"
    }  # fmt: skip
    text = "\n".join(s.lines())
    assert "flip rate 50.0% [" in text and "(90% Wilson, n=4): the repeats of 2 of 4 items do not all agree" in text
    assert "decided 2, undecided 2, 1 with fewer than 2 verdicts" in text
    assert "items whose repeats all agree: 3 (yes ×3: 1, no ×3: 1, yes ×1: 1)" in text
    assert "    b: yes 2, no 1 (undecided)\n      voirdire show runs/t.jsonl --session b@r1  # yes" in text


def test_no_section_without_repeats_and_no_interval_with_intervals_off() -> None:
    assert stability([("a", "a", "yes"), ("b", "b", "no")]) is None
    s = stability(sessions("a", "yes", "no"), level=None)
    assert s is not None and s.flip_low is None and s.level is None
    assert "flip rate 100.0%: the repeats of 1 of 1 item do not all agree" in "\n".join(s.lines())
    s = stability(sessions("a", None, None))
    assert s is not None and s.flip_rate is None and s.assessed == 0
    assert "undefined (no item has two verdicts)" in "\n".join(s.lines())


def test_the_text_lists_at_most_the_limit_and_says_how_many_more() -> None:
    rows = [row for i in range(25) for row in sessions(f"i{i}", "yes", "no")]
    s = stability(rows)
    assert s is not None
    lines = s.lines(limit=20)
    assert lines[-1] == "    … 5 more (--json for all)" and len(s.flipping_items) == 25


@pytest.mark.parametrize("bad", [0.5, 0.3, 1.01])
def test_decided_at_is_a_majoritys_share(bad: float) -> None:
    with pytest.raises(ValueError, match=r"decided_at must be above 0.5 and at most 1"):
        stability(sessions("a", "yes", "no"), decided_at=bad)


def test_majority() -> None:
    assert majority(["a", "b", "a", None]) == "a"
    assert majority(["a", "b"]) is None and majority([None, None]) is None and majority([]) is None


# ----------------------------------------------------------------------------------- the shared report fold


async def flipping_run(tmp_path: Path) -> Path:
    """Two items, three repeats each; the judge rules the first item correct, incorrect, correct and the second
    correct every time (one process, one session at a time: the script's rulings go in order)."""
    client = judge_in_turns("correct", "incorrect", "correct", "correct", "correct", "correct")
    out = tmp_path / "t.jsonl"
    await run_protocol(Chaos(), items(2), out=out, clients={"witness": client, "judge": client}, repeats=3)
    return out


async def test_every_report_gets_the_section_from_the_shared_fold(tmp_path: Path) -> None:
    out = await flipping_run(tmp_path)
    streamed, _ = report_file(out, generic_report, decided_at=0.6)
    loaded = generic_report(load(out), decided_at=0.6)
    assert streamed.stability is not None and streamed.stability == loaded.stability.model_copy(  # type: ignore[union-attr]
        update={"transcript": str(out)}
    )
    s = streamed.stability
    assert (s.flipping, s.assessed, s.undecided_items) == (1, 2, [])  # 2 of 3 at 0.6: decided
    assert s.items[0].verdicts == {"correct": 2, "incorrect": 1}
    strict, _ = report_file(out, generic_report)  # the default, 0.8
    assert strict.stability is not None and strict.stability.undecided_items == ["q000"]
    assert "stability over 3 repeats of 2 items" in strict.text()
    only, _ = report_file(out, generic_report, only=["q001@r1", "q001@r2"])  # a command's own sessions
    assert only.stability is not None and only.stability.flipping == 0 and len(only.stability.items) == 1
    dumped = strict.model_dump(mode="json")["stability"]
    assert dumped["undecided_items"] == ["q000"] and dumped["flipping_items"][0]["item_id"] == "q000"


async def test_report_takes_decided_at_and_refuses_a_share_that_is_no_majority(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = await flipping_run(tmp_path)
    assert main(["report", str(out), "--decided-at", "0.6"]) == 0
    assert "decided 2, undecided 0" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_:
        main(["report", str(out), "--decided-at", "0.5"])
    err = capsys.readouterr().err.strip().splitlines()
    assert exit_.value.code == 2
    assert "--decided-at: '0.5' is not a majority's share: give one above 0.5, at most 1 (0.8)" in err[0]


# ----------------------------------------------------------------------------------- compare and calibrate


def ov(item: str, decision: str | None, repeat: int | None, correct: bool | None = None) -> Overview:
    accepted = None if decision is None else decision == "yes"
    return Overview(item, decision, accepted, correct, (), "", repeat)


def test_compare_reads_an_items_repeats_as_its_majority() -> None:
    run = RunOverviews("a", "a.jsonl", "p", 7, [
        ov("x", "yes", 1, True), ov("x", "no", 2, False), ov("x", "no", 3, False),
        ov("y", "yes", 1), ov("y", "no", 2),  # a tie: no verdict
        ov("z", "yes", None),
    ])  # fmt: skip
    found = by_item(run)
    assert (found["x"].decision, found["x"].accepted, found["x"].correct) == ("no", False, False)
    assert found["y"].decision is None and found["z"].decision == "yes"
    other = RunOverviews("b", "b.jsonl", "p", 3, [ov("x", "no", None), ov("y", "yes", None), ov("z", "yes", None)])
    c = compare_runs([run, other])
    assert [r.agree for r in c.rows] == [True, None, True]


def test_compare_still_refuses_repeats_beside_a_session_of_their_own() -> None:
    run = RunOverviews("a", "a.jsonl", "p", 3, [ov("x", "yes", None), ov("x", "yes", 1), ov("x", "no", 2)])
    with pytest.raises(CompareError, match=r"a.jsonl: 3 sessions share item id 'x'"):
        by_item(run)


@dataclass(frozen=True)
class Judged:
    session_id: str
    item_id: str
    decision: str | None
    accepted: bool | None


def test_calibration_keeps_one_session_per_repeated_item() -> None:
    rows = [
        Judged("x@r1", "x", "no", False), Judged("y", "y", "yes", True), Judged("x@r2", "x", "yes", True),
        Judged("x@r3", "x", "yes", True), Judged("z@r1", "z", "yes", True), Judged("z@r2", "z", "no", False),
    ]  # fmt: skip
    kept = one_per_item(rows, {"x@r1", "x@r2", "x@r3", "z@r1", "z@r2"}, accepted=None)
    assert kept == [Judged("x@r2", "x", "yes", True), Judged("y", "y", "yes", True), Judged("z@r1", "z", None, None)]


async def test_calibrate_reads_a_repeated_run_once_per_item(tmp_path: Path) -> None:
    from voirdire.certificate import read_run

    out = await flipping_run(tmp_path)
    repeats = {sid for sid, s in load(out).sessions.items() if is_repeat(s)}
    assert repeats == {f"q00{i}@r{r}" for i in (0, 1) for r in (1, 2, 3)}
    run = read_run(out)
    assert [(s.item_id, s.decision) for s in run.sessions] == [("q000", "correct"), ("q001", "correct")]


def test_a_protocol_with_a_summary_of_its_own_gives_the_section_in_text_and_json(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """qa-eval (the lexical evaluator, no model) summarizes its own way: its repeats are still its report's, in
    text and in --json."""
    argv = ["run", "qa_lexical", "--data", str(shared_data / "evouna" / "NQ.json"), "--limit", "3", "--repeats", "2",
            "--out", str(tmp_path / "lex.jsonl"), "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "stability over 2 repeats of 3 items" in text and "qa_lexical: 6 sessions, 6 verdicts" in text
    assert main([*argv, "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["skipped"] == 6 and payload["stability"]["assessed"] == 3
    assert payload["stability"]["flip_rate"] == 0.0  # a rule: the same verdict every time
