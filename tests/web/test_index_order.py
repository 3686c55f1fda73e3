"""The session order the index keeps for the run list and a session page's previous/next links: the counting
attempts in order of first appearance, kept right as the file grows, is rewritten, or is loaded from a stored index."""

from __future__ import annotations

from pathlib import Path

from voirdire.transcript import ErrorEvent, RunHeader, SessionStart, TranscriptWriter, Verdict
from voirdire.web.index import TranscriptIndex


def start(sid: str, run_id: str = "r1") -> SessionStart:
    return SessionStart(run_id=run_id, session_id=sid, seq=1, item_id=sid, item={"q": f"{sid}?"})


def test_neighbours_follow_the_order_as_the_file_grows_and_is_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with TranscriptWriter(path) as w:
        w.write(RunHeader(run_id="r1", protocol="toy"))
        for sid in ("a", "b", "c"):
            w.write(start(sid))
    index = TranscriptIndex(path, persist=False)
    index.refresh()
    assert [s.sid for s in index.sessions()] == ["a", "b", "c"]
    assert index.neighbours("a") == (None, "b")
    assert index.neighbours("b") == ("a", "c")
    assert index.neighbours("c") == ("b", None)
    assert index.neighbours("nope") == (None, None)
    # appended: a new session at the end, and a later attempt at "b" that counts now
    with TranscriptWriter(path) as w:
        w.write(RunHeader(run_id="r2", protocol="toy"))
        w.write(start("d", "r2"))
        w.write(start("b", "r2"))
        w.write(Verdict(run_id="r2", session_id="b", seq=2, decision="ok", accepted=True))
    assert index.refresh()
    assert [s.sid for s in index.sessions()] == ["a", "b", "c", "d"]
    assert index.session("b").rid == "r2"  # type: ignore[union-attr]
    assert index.neighbours("c") == ("b", "d") and index.neighbours("d") == ("c", None)
    # rewritten (--fresh): the order starts over
    path.unlink()
    with TranscriptWriter(path) as w:
        w.write(RunHeader(run_id="r3", protocol="toy"))
        w.write(start("z", "r3"))
        w.write(ErrorEvent(run_id="r3", session_id="z", seq=2, error_type="E", message="boom"))
    assert index.refresh()
    assert [s.sid for s in index.sessions()] == ["z"] and index.neighbours("z") == (None, None)
    assert index.neighbours("a") == (None, None)


def test_a_stored_index_gives_the_same_order(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with TranscriptWriter(path) as w:
        w.write(RunHeader(run_id="r1", protocol="toy"))
        for sid in ("a", "b", "c"):
            w.write(start(sid))
    first = TranscriptIndex(path, store=tmp_path / "t.index.json")
    first.refresh()
    again = TranscriptIndex(path, store=tmp_path / "t.index.json")
    again.refresh()  # loaded from the stored index, nothing read from the transcript
    assert [s.sid for s in again.sessions()] == ["a", "b", "c"]
    assert again.neighbours("b") == ("a", "c")
    listed = again.sessions()
    listed.clear()  # a caller's copy: the index's own order is untouched
    assert again.neighbours("b") == ("a", "c")


def test_a_derived_value_is_computed_once_until_the_file_changes(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with TranscriptWriter(path) as w:
        w.write(RunHeader(run_id="r1", protocol="toy"))
        w.write(start("a"))
    index = TranscriptIndex(path, persist=False)
    index.refresh()
    calls: list[int] = []

    def count(ix: TranscriptIndex) -> int:
        calls.append(1)
        return len(ix.sessions())

    assert index.derived("n", count) == 1 and index.derived("n", count) == 1 and len(calls) == 1
    assert not index.refresh() and index.derived("n", count) == 1 and len(calls) == 1
    with TranscriptWriter(path) as w:
        w.write(start("b"))
    assert index.refresh()
    assert index.derived("n", count) == 2 and len(calls) == 2
