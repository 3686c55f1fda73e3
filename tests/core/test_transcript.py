"""Transcript schema: round-trip, torn last line, bad lines named by file:line, session rebuild."""

from __future__ import annotations

from pathlib import Path

import pytest

from voirdire.transcript import (
    Message,
    ModelCall,
    ParseFailure,
    RoleBinding,
    RunHeader,
    SessionStart,
    Step,
    TokenUsage,
    TranscriptError,
    TranscriptWriter,
    Transition,
    Verdict,
    load,
    read_lines,
)


def sample(run_id: str = "r1", sid: str = "s1", verdict: bool = True) -> list:
    base = {"run_id": run_id, "session_id": sid}
    events = [
        SessionStart(**base, seq=1, item_id=sid, item={"claim": "c"}),
        Transition(**base, seq=2, from_state=None, to_state="setup", stage="setup", turn=0),
        Message(**base, seq=3, sender="moderator", receiver="examiner", content="Q?", prompt="x/setup", quote=None),
        ModelCall(
            **base,
            seq=4,
            role="examiner",
            model="scripted",
            request_digest="sha256:0",
            response="A",
            usage=TokenUsage(prompt_tokens=3, completion_tokens=1),
            latency_s=0.01,
            retries=1,
        ),
        ParseFailure(
            **base,
            seq=5,
            role="examiner",
            prompt="x/setup",
            expected="Yes or No",
            raw="A",
            error="no",
            outcome="treated as No",
        ),
        Step(**base, seq=6, name="round", data={"x": "0101", "flip": False}),
    ]
    if verdict:
        events.append(Verdict(**base, seq=7, decision="correct", accepted=True, evidence=["A"], statistics={"n": 1}))
    return events


def test_round_trip_preserves_every_event(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    header = RunHeader(run_id="r1", protocol="p", parameters={"a": 1}, roles={"examiner": RoleBinding(spec="local")})
    events = sample()
    with TranscriptWriter(out) as w:
        w.write(header)
        for e in events:
            w.write(e)
    records = list(read_lines(out))
    assert records == [header, *events]
    t = load(out)
    assert t.header == header and list(t.sessions) == ["s1"]
    s = t.sessions["s1"]
    assert s.events == events and s.verdict == events[-1] and s.item == {"claim": "c"}
    assert t.finished() == {"s1"}


def test_each_event_is_flushed_so_a_reader_sees_a_running_session(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    w = TranscriptWriter(out)
    w.write(RunHeader(run_id="r1", protocol="p"))
    for e in sample(verdict=False)[:3]:
        w.write(e)
        assert load(out).sessions["s1"].events[-1] == e  # visible before the writer closes
    assert load(out).finished() == set()
    w.close()


def test_torn_last_line_is_ignored_and_dropped_by_the_next_writer(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    with TranscriptWriter(out) as w:
        w.write(RunHeader(run_id="r1", protocol="p"))
        for e in sample(verdict=False):
            w.write(e)
    with out.open("a") as fh:
        fh.write('{"kind": "verdict", "run_id": "r1", "sess')  # crash mid-write
    assert load(out).finished() == set()
    with TranscriptWriter(out) as w:  # a resumed run drops the half line and appends whole records
        w.write(sample(verdict=True)[-1])
    assert load(out).finished() == {"s1"}
    assert "sess\n" not in out.read_text() and out.read_text().count("\n") == 8


def test_bad_line_in_the_middle_names_file_and_line(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    out.write_text(
        RunHeader(run_id="r", protocol="p").model_dump_json()
        + '\n{"kind": "nonsense"}\n'
        + sample()[0].model_dump_json()
        + "\n"
    )
    with pytest.raises(TranscriptError, match=r"t\.jsonl:2"):
        load(out)


def test_a_finished_attempt_wins_over_an_abandoned_one(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    with TranscriptWriter(out) as w:
        w.write(RunHeader(run_id="r1", protocol="p"))
        for e in sample(run_id="r1", verdict=False):
            w.write(e)
        w.write(RunHeader(run_id="r2", protocol="p"))
        for e in sample(run_id="r2", verdict=True):
            w.write(e)
    t = load(out)
    assert len(t.headers) == 2 and t.sessions["s1"].run_id == "r2"
    assert all(e.run_id == "r2" for e in t.sessions["s1"].events)


def test_a_tear_inside_a_multibyte_character_is_still_a_torn_line(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    with TranscriptWriter(out) as w:
        w.write(RunHeader(run_id="r1", protocol="p"))
        for e in sample(verdict=False):
            w.write(e)
    message = sample()[2].model_copy(update={"content": "café " * 3, "seq": 99})
    data = (message.model_dump_json() + "\n").encode()
    cut = data.index("é".encode()) + 1  # half of the two bytes of é
    with out.open("ab") as fh:
        fh.write(data[:cut])
    assert load(out).sessions["s1"].events[-1].seq == 6  # the torn line is ignored
    with TranscriptWriter(out) as w:
        w.write(sample()[-1])
    assert load(out).finished() == {"s1"}
