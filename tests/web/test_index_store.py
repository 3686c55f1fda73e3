"""The index's SQLite rows: a scan in small batches gives what one pass gives, an append is read alone (also by a
new process finding the index on disk), a rewrite starts over, the sessions list's SQL pages and filters keep what
the Python filter keeps, the runs list's sums add up the sessions, and a damaged index file is rebuilt."""

from __future__ import annotations

import contextlib
import itertools
import os
import sqlite3
from pathlib import Path

import pytest

from voirdire.transcript import ErrorEvent, RunHeader, SessionStart, TranscriptWriter, Verdict
from voirdire.web import index_scan
from voirdire.web.index import Attempt, TranscriptIndex, default_store
from voirdire.web.query import CHOICES, PAGE_SIZE, Query, select

COMPARED = ("sid", "rid", "title", "events", "messages", "calls", "prompt_tokens", "completion_tokens",
            "retries", "parse_failures", "errors", "state", "decision", "accepted", "correct", "models", "status",
            "end")  # fmt: skip


def _seen(a: Attempt) -> tuple[object, ...]:
    return tuple(getattr(a, name) for name in COMPARED)


def start(sid: str, run_id: str = "r1", text: str = "") -> SessionStart:
    return SessionStart(run_id=run_id, session_id=sid, seq=1, item_id=sid, item={"q": f"{sid}? {text}"})


def many(path: Path, sessions: int, run_id: str = "r1", first: int = 0) -> None:
    """``sessions`` sessions (every third one errs, the rest reach a verdict), appended to ``path``."""
    with TranscriptWriter(path) as w:
        w.write(RunHeader(run_id=run_id, protocol="toy"))
        for n in range(first, first + sessions):
            sid = f"s{n:04d}"
            w.write(start(sid, run_id, "x" * 100))
            if n % 3 == 0:
                w.write(ErrorEvent(run_id=run_id, session_id=sid, seq=2, error_type="E", message="boom"))
            else:
                w.write(Verdict(run_id=run_id, session_id=sid, seq=2, decision=f"d{n % 2}", accepted=n % 2 == 0))


@pytest.mark.parametrize("name", ["cross_examination", "dcr", "majority", "qa_lexical", "no_data", "hostile"])
def test_a_scan_in_small_batches_gives_what_one_pass_gives(
    transcripts: dict[str, Path], name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = TranscriptIndex(transcripts[name], persist=False)
    whole.refresh()
    monkeypatch.setattr(index_scan, "BATCH", 3)  # a write to the ledger every 3 lines
    monkeypatch.setattr(index_scan, "GOLD_BATCH", 2)  # the report asked about gold every 2 finished sessions
    small = TranscriptIndex(transcripts[name], persist=False)
    small.refresh()
    assert [_seen(a) for a in small.sessions()] == [_seen(a) for a in whole.sessions()]
    assert small.totals() == whole.totals() and len(small.headers) == len(whole.headers)
    every = {sid: list(by) for sid, by in whole.attempts.items()}
    assert {sid: list(by) for sid, by in small.attempts.items()} == every


def test_an_append_is_read_alone_also_by_a_new_process(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    many(path, 60)
    index = TranscriptIndex(path)
    index.refresh()
    first = index.session("s0000")
    assert first is not None and first.title.startswith("s0000?")
    # the first session's item edited in place (same length, far before the end the index checks): an index that
    # read the file again would show it; one that reads the appended bytes alone does not
    data = path.read_bytes()
    path.write_bytes(data.replace(b'"s0000? x', b'"s0000? y', 1))
    many(path, 5, "r2", first=60)
    assert index.refresh()
    assert index.session("s0000").title == first.title  # type: ignore[union-attr]
    assert index.count() == 65 and index.session("s0064") is not None
    many(path, 5, "r3", first=65)
    again = TranscriptIndex(path)  # a new viewer finds the index on disk and reads only what came since
    assert again.refresh() and not again._rebuilt
    assert again.session("s0000").title == first.title and again.count() == 70  # type: ignore[union-attr]
    assert [a.sid for a in again.sessions()] == [f"s{n:04d}" for n in range(70)]


def test_a_file_rewritten_to_the_same_size_is_indexed_afresh(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    many(path, 10)
    TranscriptIndex(path).refresh()
    text = path.read_bytes()
    path.write_bytes(text.replace(b"s0009", b"z0009"))  # the tail changed: not an append
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    again = TranscriptIndex(path)
    assert again.refresh()
    assert again.session("s0009") is None and again.session("z0009") is not None and again.count() == 10


def test_the_sessions_list_pages_in_session_order(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    many(path, PAGE_SIZE * 2 + 7)
    many(path, 3, "r2", first=5)  # later attempts at s0005-s0007: their places stay where they first appeared
    index = TranscriptIndex(path, persist=False)
    index.refresh()
    every = index.sessions()
    assert [a.sid for a in every] == [f"s{n:04d}" for n in range(PAGE_SIZE * 2 + 7)]
    assert index.session("s0005").rid == "r2"  # type: ignore[union-attr]
    shown = [select(index, Query(page=p)).rows for p in (1, 2, 3, 4)]
    assert [_seen(a) for a in itertools.chain(*shown[:3])] == [_seen(a) for a in every]
    assert [a.sid for a in shown[3]] == [a.sid for a in shown[2]]  # past the end: the last page
    assert index.neighbours("s0005") == ("s0004", "s0006")


def test_every_sql_filter_keeps_what_the_python_filter_keeps(transcripts: dict[str, Path], tmp_path: Path) -> None:
    path = tmp_path / "all.jsonl"
    many(path, 30)
    cases = [path, transcripts["cross_examination"], transcripts["no_data"], transcripts["hostile_fields"]]
    for source in cases:
        index = TranscriptIndex(source, persist=False)
        index.refresh()
        for name, choices in CHOICES.items():
            if name == "labels":
                continue  # people's labels come from a sidecar, filtered in Python
            for choice in choices:
                for query in (Query(**{name: choice}), Query(**{name: choice}, verdict="d1")):
                    by_sql = select(index, query)
                    by_python = select(index, query, keep=lambda a: True)
                    assert [a.sid for a in by_sql.rows] == [a.sid for a in by_python.rows], (source, query)
                    assert (by_sql.total, by_sql.all, by_sql.decisions) == (
                        by_python.total, by_python.all, by_python.decisions
                    )


def test_the_runs_list_sums_are_the_sessions_sums(transcripts: dict[str, Path]) -> None:
    for path in transcripts.values():
        index = TranscriptIndex(path, persist=False)
        index.refresh()
        every = index.sessions()
        totals = index.totals()
        assert totals["sessions"] == len(every)
        assert totals["finished"] == sum(a.status == "finished" for a in every)
        assert totals["errors"] == sum(a.status == "error" for a in every)
        assert totals["calls"] == sum(a.calls for a in every)
        assert totals["prompt_tokens"] == sum(a.prompt_tokens for a in every)
        assert totals["judged"] == sum(a.correct is not None for a in every)
        assert totals["correct"] == sum(a.correct is True for a in every)
        assert totals["latency_s"] == pytest.approx(sum(a.latency_s for a in every))
        billed: dict[str, list[int]] = {}
        for by_run in index.attempts.values():
            for a in by_run.values():
                for model, tally in a.models.items():
                    billed.setdefault(model, []).append(tally.prompt_tokens)
        assert list(totals["billed"]) == list(billed)
        assert {m: t[0] for m, t in totals["billed"].items()} == {m: sum(v) for m, v in billed.items()}


@pytest.mark.parametrize(
    "damage",
    [
        lambda store: store.write_bytes(store.read_bytes()[:3000]),  # cut short
        lambda store: store.write_bytes(b"SQLite format 3\x00" + b"\xff" * 5000),  # an SQLite header, then noise
        lambda store: store.write_text('{"version": 3, "attempts": []}'),  # the older one-document index
    ],
    ids=["truncated", "noise", "older"],
)
def test_a_damaged_index_file_is_rebuilt(tmp_path: Path, damage: object) -> None:
    path = tmp_path / "t.jsonl"
    many(path, 40)
    TranscriptIndex(path).refresh()
    store = default_store(path)
    damage(store)  # type: ignore[operator]
    again = TranscriptIndex(path)
    again.refresh()
    assert [a.sid for a in again.sessions()] == [f"s{n:04d}" for n in range(40)]
    assert again.totals()["errors"] == 14
    with contextlib.closing(sqlite3.connect(store)) as con:  # written afresh, in the right place
        assert con.execute("SELECT count(*) FROM attempts").fetchone()[0] == 40


def test_a_forged_row_is_rebuilt_while_serving(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    many(path, 5)
    TranscriptIndex(path).refresh()
    with contextlib.closing(sqlite3.connect(default_store(path))) as con, con:
        con.execute("UPDATE rows SET row = json_set(row, '$[6]', 'many') WHERE aid = 2")  # events: no number
    again = TranscriptIndex(path)
    assert not again.refresh()  # the file has not changed: nothing read yet
    a = again.session("s0001")
    assert a is not None and a.events == 2 and again._rebuilt


def test_without_persist_no_file_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = tmp_path / "runs"
    folder.mkdir()
    many(folder / "t.jsonl", 5)
    index = TranscriptIndex(folder / "t.jsonl", persist=False)
    index.refresh()
    assert index.count() == 5 and sorted(p.name for p in folder.iterdir()) == ["t.jsonl"]
    assert not (tmp_path / "cache").exists()


def test_two_viewers_of_one_file_share_its_index(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    many(path, 10)
    one, two = TranscriptIndex(path), TranscriptIndex(path)
    one.refresh()
    two.refresh()
    many(path, 5, "r2", first=10)
    assert two.refresh()  # the second viewer indexes the append and writes it to the shared file
    many(path, 5, "r3", first=15)
    assert one.refresh()  # the first takes up what the second wrote, then reads the rest
    for index in (one, two, TranscriptIndex(path)):
        index.refresh()
        assert [a.sid for a in index.sessions()] == [f"s{n:04d}" for n in range(20)]
        assert index.totals()["sessions"] == 20 and len(index.headers) == 3
