"""The byte-offset index: the same sessions as ``transcript.load``, read from their spans alone, kept up to date by
reading only appended bytes, rebuilt when the file is rewritten, stored beside the transcript or in the cache."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
from pathlib import Path

import pytest

from voirdire.transcript import ErrorEvent, Message, RunHeader, SessionStart, TranscriptWriter, Verdict, load
from voirdire.web.index import TranscriptIndex, cache_store, default_store


def event(kind: type, sid: str, seq: int, run_id: str = "r2", **fields: object) -> object:
    return kind(run_id=run_id, session_id=sid, seq=seq, **fields)


def test_sessions_match_load_and_are_read_from_their_spans(transcripts: dict[str, Path]) -> None:
    for path in transcripts.values():
        index = TranscriptIndex(path, persist=False)
        assert index.refresh()
        loaded = load(path)
        assert [a.sid for a in index.sessions()] == list(loaded.sessions)
        for sid, s in loaded.sessions.items():
            record = index.record(sid)
            assert record is not None and record.events == s.events and record.item == s.item
            a = index.session(sid)
            assert a is not None and a.events == len(s.events)
            assert a.decision == (s.verdict.decision if s.verdict else None)
        assert index.header() == loaded.header


def test_summary_counts_and_gold_correctness(transcripts: dict[str, Path]) -> None:
    ce = TranscriptIndex(transcripts["cross_examination"], persist=False)
    ce.refresh()
    paris, rome = ce.session("paris"), ce.session("rome")
    assert paris is not None and rome is not None
    # the report's rows give gold: "The answer is Paris." is right for Paris, wrong for Rome; both verdicts agree
    assert (paris.decision, paris.accepted, paris.correct) == ("correct", True, True)
    assert (rome.decision, rome.accepted, rome.correct) == ("incorrect", False, True)
    assert paris.parse_failures == 1 and paris.calls == 6 and paris.prompt_tokens > 0 and paris.status == "finished"
    assert paris.title == "What is the capital of France?"
    nd = TranscriptIndex(transcripts["no_data"], persist=False)
    nd.refresh()
    assert all(a.correct is not None for a in nd.sessions())  # from the verdict's statistics
    assert all(a.calls == 0 and a.messages > 0 for a in nd.sessions())


def test_appends_are_read_incrementally_and_a_rewrite_is_reindexed(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with TranscriptWriter(path) as w:
        w.write(runs_header("r1"))
        w.write(event(SessionStart, "a", 1, "r1", item_id="a", item={"q": "first?"}))
        w.write(event(ErrorEvent, "a", 2, "r1", error_type="E", message="boom"))
    index = TranscriptIndex(path)
    index.refresh()
    assert index.session("a").status == "error"  # type: ignore[union-attr]
    size = index.size
    # a resumed run appends a new attempt at "a" and a new session "b"; a half-written line waits
    with TranscriptWriter(path) as w:
        w.write(runs_header("r2"))
        w.write(event(SessionStart, "a", 1, item_id="a", item={"q": "first?"}))
        w.write(event(SessionStart, "b", 1, item_id="b", item={"q": "second?"}))
        w.write(event(Message, "a", 2, sender="judge", receiver="moderator", content="fine"))
        w.write(event(Verdict, "a", 3, decision="ok", accepted=True))
    with path.open("a") as fh:
        fh.write('{"run_id": "r2", "session_id": "b", "seq": 2, "ki')
    assert index.refresh() and index.size > size
    a = index.session("a")
    assert a is not None and a.rid == "r2" and a.status == "finished" and a.messages == 1
    assert [s.sid for s in index.sessions()] == ["a", "b"] and len(index.headers) == 2
    assert index.record("a") == load(path).sessions["a"]
    assert not index.refresh()  # nothing new: the torn line is not a record yet
    # --fresh rewrites the file: the index notices and starts over
    path.unlink()
    with TranscriptWriter(path) as w:
        w.write(runs_header("r3"))
        w.write(event(SessionStart, "c", 1, "r3", item_id="c", item={"q": "third, and the file is now longer?"}))
    assert index.refresh()
    assert [s.sid for s in index.sessions()] == ["c"] and len(index.headers) == 1


def runs_header(run_id: str) -> RunHeader:
    return RunHeader(run_id=run_id, protocol="toy")


def test_the_index_is_kept_beside_the_transcript_and_reused(transcripts: dict[str, Path], tmp_path: Path) -> None:
    path = tmp_path / "copy.jsonl"
    shutil.copy(transcripts["cross_examination"], path)
    first = TranscriptIndex(path)
    first.refresh()
    assert default_store(path).is_file() and default_store(path).name == ".copy.jsonl.index"
    again = TranscriptIndex(path)
    again._scan = None  # type: ignore[assignment,method-assign]  # a reused index reads nothing of the file
    assert not again.refresh()
    assert [a.sid for a in again.sessions()] == ["paris", "rome"] and again.session("paris").correct is True  # type: ignore[union-attr]
    assert again.record("rome") == load(path).sessions["rome"]


def test_an_unwritable_store_falls_back_to_the_cache(
    transcripts: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = tmp_path / "t.jsonl"
    shutil.copy(transcripts["no_data"], path)
    default_store(path).mkdir()  # a folder where the index file would go: not writable as a file
    index = TranscriptIndex(path)
    index.refresh()
    assert index.store == cache_store(path) and stored_size(cache_store(path)) == path.stat().st_size
    again = TranscriptIndex(path)
    again._scan = None  # type: ignore[assignment,method-assign]
    assert not again.refresh() and len(again.sessions()) == 3


def stored_size(store: Path) -> int:
    with contextlib.closing(sqlite3.connect(store)) as con:
        return int(con.execute("SELECT v FROM meta WHERE k = 'size'").fetchone()[0])


def test_search_finds_words_in_values_not_in_keys_or_ids(transcripts: dict[str, Path]) -> None:
    index = TranscriptIndex(transcripts["cross_examination"], persist=False)
    index.refresh()
    every = index.sessions()
    assert [a.sid for a in index.search("ITALY", every)] == ["rome"]  # case-insensitive, the item counts
    assert [a.sid for a in index.search("seine capital", every)] == ["paris", "rome"]  # every word, anywhere
    assert index.search("seine nowhere", every) == []
    assert index.search("session_id", every) == [] and index.search("request_digest", every) == []
    assert index.search("treated as No", every) == every  # a parse failure's outcome
    hostile = TranscriptIndex(transcripts["hostile"], persist=False)
    hostile.refresh()
    assert len(hostile.search('onerror="window.pwned=1"', hostile.sessions())) == 1  # quotes are escaped in JSON
    qa = TranscriptIndex(transcripts["qa_lexical"], persist=False)
    qa.refresh()
    assert len(qa.search("RÖNTGEN", qa.sessions())) == 5  # non-ASCII letters in another case


def test_the_verdict_words_are_each_decision_that_stood_for_one_side(tmp_path: Path) -> None:
    """A session page's verdict set: each decision with the accept/reject it stood for, from the ledger's index; a
    decision that stood for both, or for neither, is left out, and a later attempt of a session replaces its
    earlier one."""
    from voirdire.transcript import RunHeader, SessionStart, TranscriptWriter, Verdict
    from voirdire.web.index import TranscriptIndex

    path = tmp_path / "t.jsonl"
    verdicts = [("a", "yes", True), ("b", "yes", True), ("c", "maybe", True), ("d", "maybe", False),
                ("e", "none", None), ("f", "no", True)]  # fmt: skip
    with TranscriptWriter(path) as w:
        w.write(RunHeader(run_id="r1", protocol="unregistered"))
        for sid, decision, accepted in verdicts:
            w.write(SessionStart(run_id="r1", session_id=sid, seq=1, item_id=sid, item={}))
            w.write(Verdict(run_id="r1", session_id=sid, seq=2, decision=decision, accepted=accepted))
        w.write(RunHeader(run_id="r2", protocol="unregistered"))  # f again: now it says no was a rejection
        w.write(SessionStart(run_id="r2", session_id="f", seq=1, item_id="f", item={}))
        w.write(Verdict(run_id="r2", session_id="f", seq=2, decision="no", accepted=False))
    index = TranscriptIndex(path, persist=False)
    index.refresh()
    assert index.verdict_words() == {"yes": True, "no": False}


def test_the_gold_check_imports_the_runs_protocol_alone(transcripts: dict[str, Path]) -> None:
    """Gold from the report of the run's own protocol: the others are not imported (each costs a live viewer's
    first refresh after an append its import)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from voirdire.web.index import TranscriptIndex\n"
        f"index = TranscriptIndex({str(transcripts['cross_examination'])!r}, persist=False)\n"
        "index.refresh()\n"
        "assert index.session('paris').correct is True\n"
        "print(sorted(m for m in sys.modules if m.startswith('voirdire.protocols.') and m.endswith('.registration')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # every protocol's card is read (a small module each); only the run's registration is imported
    assert done.stdout.strip() == "['voirdire.protocols.cross_examination.registration']"
