"""One rule for the attempt of a session that counts (the last one that reached a verdict, else the latest), held
by every reader: ``load``, the streamed report fold and the viewer's index are fed the same shuffled attempts and
must pick what ``counting_attempt`` picks."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from voirdire.reports import Report, ReportFold, report_file
from voirdire.transcript import (
    ErrorEvent,
    Message,
    RunHeader,
    SessionStart,
    TranscriptWriter,
    Verdict,
    counting_attempt,
    load,
)
from voirdire.web.index import TranscriptIndex


def test_counting_attempt_is_the_last_with_a_verdict_else_the_latest() -> None:
    assert counting_attempt([], bool) is None
    assert counting_attempt([("a", False), ("b", False)], lambda a: a[1]) == ("b", False)
    assert counting_attempt([("a", True), ("b", False)], lambda a: a[1]) == ("a", True)
    assert counting_attempt([("a", True), ("b", True), ("c", False)], lambda a: a[1]) == ("b", True)


def _attempt(run_id: str, sid: str, ending: str) -> list[Any]:
    """One run's attempt at one session: its start, a message, then a verdict, an error, or nothing (a crash)."""
    events: list[Any] = [
        SessionStart(run_id=run_id, session_id=sid, seq=0, item_id=sid, item={"q": sid}),
        Message(run_id=run_id, session_id=sid, seq=1, sender="a", receiver="b", content=f"{run_id} asks"),
    ]
    if ending == "verdict":
        events.append(Verdict(run_id=run_id, session_id=sid, seq=2, decision=f"by {run_id}", accepted=True))
    elif ending == "error":
        events.append(ErrorEvent(run_id=run_id, session_id=sid, seq=2, error_type="RuntimeError", message="boom"))
    return events


def _shuffled_transcript(seed: int, path: Path) -> dict[str, list[tuple[str, bool]]]:
    """A transcript of a few sessions, each attempted by 1-4 runs in a random order, each attempt ending in a
    verdict, an error or nothing; returns each session's attempts (run id, reached a verdict) in file order."""
    rng = random.Random(seed)
    runs = [f"r{i}" for i in range(4)]
    attempts = [
        (run_id, f"s{s}", rng.choice(("verdict", "error", "none")))
        for s in range(rng.randint(1, 4))
        for run_id in rng.sample(runs, rng.randint(1, 4))
    ]
    rng.shuffle(attempts)
    order: dict[str, list[tuple[str, bool]]] = {}
    with TranscriptWriter(path) as writer:
        for run_id in runs:
            writer.write(RunHeader(run_id=run_id, protocol="toy"))
        for run_id, sid, ending in attempts:
            order.setdefault(sid, []).append((run_id, ending == "verdict"))
            for event in _attempt(run_id, sid, ending):
                writer.write(event)
    return order


@pytest.mark.parametrize("seed", range(60))
def test_every_reader_picks_the_same_attempt(seed: int, tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    attempts = _shuffled_transcript(seed, path)
    expected = {sid: counting_attempt(runs, lambda a: a[1]) for sid, runs in attempts.items()}
    expected_runs = {sid: a[0] for sid, a in expected.items() if a is not None}

    loaded = load(path)
    assert {sid: s.run_id for sid, s in loaded.sessions.items()} == expected_runs

    folded: list[tuple[str, str]] = []

    def finish(values: Any, ctx: Any) -> Report:
        folded.extend(values)
        return Report(protocol="toy")

    report_file(path, ReportFold(session=lambda s: (s.session_id, s.run_id), finish=finish))
    assert dict(folded) == expected_runs

    index = TranscriptIndex(path, persist=False)
    index.refresh()
    assert {a.sid: a.rid for a in index.sessions()} == expected_runs
    for sid, run_id in expected_runs.items():
        chosen = index.session(sid)
        assert chosen is not None and chosen.rid == run_id
