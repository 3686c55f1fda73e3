"""Search across runs: the FTS5 index agrees with a brute-force scan of the transcripts on a 1,000-session folder,
keeps up with a growing transcript by reading only the appended bytes, starts afresh on a rewritten one, and the
``/search`` page groups hits by run and links each to its turn on the session page."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from voirdire.transcript import (
    HumanLabel,
    Message,
    RunHeader,
    SessionStart,
    TranscriptWriter,
    Verdict,
    append_label,
    load,
)
from voirdire.web import index_scan, index_store, search as search_mod
from voirdire.web.app import create_app
from voirdire.web.catalog import Library
from voirdire.web.search import Search
from voirdire.web.search_query import QueryError, parse

VOCAB = ("river", "mountain", "capital", "Paris", "Seine", "café", "Zürich", "founded", "don't", "x_y", "42", "the")
PROTOCOLS = {"cx.jsonl": ("cross_examination", ("examiner", "examinee")), "dcr.jsonl": ("dcr", ("checker", "judge"))}


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(VOCAB) for _ in range(rng.randint(3, 12))) + rng.choice([".", "?", "!", ""])


def _session(run_id: str, sid: str, rng: random.Random, roles: tuple[str, ...], finish: bool = True) -> Iterator[Any]:
    seq = iter(range(1, 1000))
    base = {"run_id": run_id, "session_id": sid}
    yield SessionStart(**base, seq=next(seq), item_id=sid.split("@")[0], item={"id": sid, "claim": _sentence(rng)})
    for _ in range(rng.randint(1, 5)):
        sender, receiver = rng.sample(roles, 2)
        yield Message(**base, seq=next(seq), sender=sender, receiver=receiver, content=_sentence(rng))
    if finish:
        decision = rng.choice(["correct", "incorrect", "Incorrect"])
        yield Verdict(**base, seq=next(seq), decision=decision, evidence=[_sentence(rng)])


def write_run(path: Path, protocol: str, roles: tuple[str, ...], sids: list[str], seed: int, *, fresh: bool = True,
              unfinished: frozenset[str] = frozenset()) -> None:  # fmt: skip
    rng = random.Random(seed)
    run_id = f"run-{path.stem}-{seed}"
    if fresh:
        path.unlink(missing_ok=True)
    with TranscriptWriter(path) as w:
        w.write(RunHeader(run_id=run_id, protocol=protocol, roles={}))
        streams = [_session(run_id, sid, rng, roles, sid not in unfinished) for sid in sids]
        while streams:  # two or three sessions at a time, interleaved as a concurrent run writes them
            for stream in list(streams[:3]):
                event = next(stream, None)
                if event is None:
                    streams.remove(stream)
                else:
                    w.write(event)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """1,000 sessions in three runs: two protocols, repeats (``ITEM@rN``), a resumed run, people's labels."""
    f = tmp_path / "runs"
    f.mkdir()
    cx = [f"i{n:03d}" for n in range(400)]
    write_run(f / "cx.jsonl", "cross_examination", ("examiner", "examinee"), cx, 1, unfinished=frozenset(cx[:30]))
    # the resumed attempt: the 30 unfinished sessions again, under a new run id, now finished
    write_run(f / "cx.jsonl", "cross_examination", ("examiner", "examinee"), cx[:30], 2, fresh=False)
    write_run(f / "dcr.jsonl", "dcr", ("checker", "judge"), [f"i{n:03d}" for n in range(400)], 3)
    write_run(f / "rep.jsonl", "dcr", ("checker", "judge"), [f"i{n:03d}@r{r}" for n in range(100) for r in (1, 2)], 4)
    for n, reading in enumerate(["disagree", "agree", "unsure", "disagree", "agree"] * 8):
        label = None if reading == "unsure" else "correct"
        append_label(f / "cx.jsonl", HumanLabel(item_id=f"i{n * 3:03d}", session_id=f"i{n * 3:03d}", verdict="x",
                                                reading=reading, label=label, annotator="ann"))  # fmt: skip
    return f


def _words(text: str) -> list[str]:
    return [w.lower() for w in re.findall(r"[^\W_]+", text)]


def _holds(words: list[str], phrase: list[str]) -> bool:
    n = len(phrase)
    return any(words[i : i + n] == phrase for i in range(len(words) - n + 1))


def brute_force(folder: Path, text: str) -> list[tuple[str, str, str, int | None]]:
    """Every hit of the query, by reading each transcript whole (``load``: the attempt of each session that counts)."""
    q = parse(text)
    out = []
    for path in sorted(folder.glob("*.jsonl")):
        if path.name.endswith(".labels.jsonl"):
            continue
        t = load(path)
        protocols = {h.run_id: h.protocol for h in t.headers}
        labels: dict[str, set[str]] = {}
        side = path.with_name(path.name + ".labels.jsonl")
        if side.exists():
            latest = {}
            for line in side.read_text().splitlines():
                lab = HumanLabel.model_validate_json(line)
                latest[(lab.item_id, lab.annotator)] = lab
            for lab in latest.values():
                labels.setdefault(lab.item_id, set()).add(lab.reading)
        for s in t.sessions.values():
            verdict = next((e for e in reversed(s.events) if isinstance(e, Verdict)), None)
            if q.verdict is not None and (verdict is None or verdict.decision.lower() != q.verdict):
                continue
            if q.protocol is not None and protocols.get(s.run_id, "").lower() != q.protocol:
                continue
            if q.label is not None:
                have = labels.get(s.item_id or "", set())
                if not (bool(have) if q.label == "any" else not have if q.label == "none" else q.label in have):
                    continue
            if not q.phrases and q.role is None:
                out.append((path.name, s.session_id, "session", None))
                continue
            for e in s.events:
                if isinstance(e, SessionStart):
                    role, body = "item", "\n".join(v for v in e.item.values() if isinstance(v, str))
                elif isinstance(e, Message):
                    role, body = e.sender, e.content
                elif isinstance(e, Verdict):
                    role, body = "verdict", "\n".join([e.decision, *e.evidence])
                else:
                    continue
                if q.role is not None and role.lower() != q.role:
                    continue
                words = _words(body)
                if all(_holds(words, p) for p in q.phrases):
                    out.append((path.name, s.session_id, e.kind, e.seq))
    return sorted(out, key=str)


def indexed(search: Search, text: str) -> list[tuple[str, str, str, int | None]]:
    groups = search.query(parse(text), limit=None)
    return sorted(((g.key, h.sid, h.kind, h.seq) for g in groups for h in g.hits), key=str)


QUERIES = [
    "river",
    "PARIS seine",
    '"capital paris"',
    '"founded the river"',
    "café",
    "zürich 42",
    "don't",
    "x_y",
    "role:examiner mountain",
    "role:item capital",
    "role:verdict correct",
    "verdict:incorrect",
    "verdict:incorrect river",
    "protocol:dcr seine",
    "protocol:cross_examination role:examinee",
    "label:disagree",
    "label:agree paris",
    "label:none verdict:correct",
    "label:any",
    "nothingmatchesthis",
]


def test_results_are_those_of_a_brute_force_scan(folder: Path) -> None:
    search = Search(Library([folder], persist=False))
    search.build()
    total = 0
    for text in QUERIES:
        expected = brute_force(folder, text)
        assert indexed(search, text) == expected, text
        total += len(expected)
    assert total > 1000  # the queries do find things
    sessions = {(g.key, h.sid) for g in search.query(parse("verdict:correct"), None) for h in g.hits}
    sessions |= {(g.key, h.sid) for g in search.query(parse("verdict:incorrect"), None) for h in g.hits}
    assert len(sessions) == 1000


def test_a_growing_transcript_is_indexed_from_where_it_stopped(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_scan, "BATCH", 37)  # many commits in one build: the bounded-memory path
    search = Search(Library([folder], persist=False))
    seen: list[tuple[str, int, int]] = []
    search.build(lambda key, done, total: seen.append((key, done, total)))
    cx = folder / "cx.jsonl"
    assert [d for k, d, _ in seen if k == "cx.jsonl"] == sorted(d for k, d, _ in seen if k == "cx.jsonl")
    assert seen[-1][1] == seen[-1][2] > 0
    before = cx.stat().st_size
    write_run(cx, "cross_examination", ("examiner", "examinee"), ["new1", "new2"], 9, fresh=False)
    with cx.open("ab") as fh:
        fh.write(b'{"run_id": "half-written')  # a line still being written waits
    run = dict(search.runs())["cx.jsonl"]
    indexed_before = run.size
    assert before == indexed_before and run.refresh()
    assert run.size == cx.stat().st_size - len(b'{"run_id": "half-written')
    with cx.open("rb+") as fh:  # the writer's torn line is cut, as the transcript writer does
        fh.truncate(cx.stat().st_size - len(b'{"run_id": "half-written'))
    assert not run.refresh() and run.size == cx.stat().st_size
    for text in ("river", "verdict:correct", "role:examinee seine"):
        assert indexed(search, text) == brute_force(folder, text), text
    assert any(h[1] == "new1" for h in indexed(search, "role:item"))


def test_a_rewritten_transcript_is_indexed_afresh(folder: Path) -> None:
    search = Search(Library([folder]))
    search.build()
    dcr = folder / "dcr.jsonl"
    write_run(dcr, "dcr", ("checker", "judge"), ["only"], 11)  # replaced by a shorter file
    run = dict(search.runs())["dcr.jsonl"]
    assert run.stale() == dcr.stat().st_size
    assert run.refresh() and run.size == dcr.stat().st_size
    assert {h[1] for h in indexed(search, "protocol:dcr") if h[0] == "dcr.jsonl"} == {"only"}
    assert indexed(search, "river") == brute_force(folder, "river")
    # a second viewer process finds the index on disk and has nothing to read
    assert Search(Library([folder])).runs()[0][1].stale() == 0


def test_bad_queries_say_what_is_wrong() -> None:
    with pytest.raises(QueryError, match="label:maybe: one of agree"):
        parse("label:maybe")
    with pytest.raises(QueryError, match="verdict: given twice"):
        parse("verdict:a verdict:b")
    with pytest.raises(QueryError, match="role: needs a value"):
        parse("role:")
    q = parse('AND OR NOT "near(" ^river*')  # FTS5 syntax in a query is only words
    assert q.fts() == '"and" AND "or" AND "not" AND "near" AND "river"'


def test_the_search_page_links_each_hit_to_its_turn(folder: Path) -> None:
    client = TestClient(create_app(Library([folder], persist=False)), base_url="http://127.0.0.1")
    page = client.get("/search", params={"q": "role:examiner river"})
    assert page.status_code == 200
    links = re.findall(r'href="(/run/([^/"]+)/session/([^"?#]+)\?prompts=1#(m\d+))"', page.text)
    assert links and {run for _, run, _, _ in links} == {"cx.jsonl"}
    assert "<mark>river</mark>" in page.text.replace("<mark>River</mark>", "<mark>river</mark>")
    href, _, _, anchor = links[0]
    session = client.get(href.split("#")[0])
    assert session.status_code == 200 and f'id="{anchor}"' in session.text
    rare = '"seine paris"'
    runs = {run for run, _, _, _ in brute_force(folder, rare)}
    grouped = client.get("/search", params={"q": rare}).text
    assert len(runs) == 3 and grouped.count('class="search-run"') == 3  # one group per run
    bad = client.get("/search", params={"q": "label:maybe"})
    assert bad.status_code == 400 and "label:maybe: one of agree" in bad.text
    hostile = client.get("/search", params={"q": "<script>window.pwned=1</script>"})
    assert "<script>window.pwned" not in hostile.text and "&lt;script&gt;" in hostile.text


def test_a_large_backlog_is_built_in_the_background_with_progress(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Search, "INLINE", 0)
    library = Library([folder], persist=False)
    client = TestClient(create_app(library), base_url="http://127.0.0.1")
    page = client.get("/search", params={"q": "river"}).text
    assert 'id="search-building"' in page and "<progress" in page and 'http-equiv="refresh"' in page
    search = search_mod.search_of(library)
    assert search._thread is not None
    search._thread.join(timeout=120)
    assert 'class="search-hit"' in client.get("/search", params={"q": "river"}).text
    search = Search(Library([folder], persist=False))  # and once more, asked directly
    building = search.ready()
    assert building is not None and building.total == sum(
        p.stat().st_size for p in folder.glob("*.jsonl") if not p.name.endswith(".labels.jsonl")
    )
    assert search._thread is not None
    search._thread.join(timeout=120)
    assert building.finished and building.done == building.total and not building.errors
    assert search.ready() is None  # nothing left to index


@pytest.mark.parametrize("how", ["in place", "a new file in its place"])
def test_a_same_size_rewrite_of_one_word_is_indexed_afresh(folder: Path, how: str) -> None:
    # Far from the end (the index once checked the size and the last 4 KB only): the search kept finding the old
    # word and missed the new one, while the session page showed the new text.
    search = Search(Library([folder], persist=False))
    search.build()
    dcr = folder / "dcr.jsonl"
    data = dcr.read_bytes()
    old, new = b"river", b"ocean"
    at = data.index(old)
    assert len(data) - at > 8192
    changed = data[:at] + new + data[at + len(old) :]
    before = dict(search.runs())["dcr.jsonl"]
    if how == "in place":
        with dcr.open("r+b") as fh:  # same file, same size
            fh.write(changed)
    else:  # as sed -i does: a new file renamed over the old one
        (folder / "dcr.tmp").write_bytes(changed)
        (folder / "dcr.tmp").replace(dcr)
    assert dcr.stat().st_size == len(data)
    assert before.stale() == len(data)
    assert search.ready() is None  # what the search page asks first: a small backlog is indexed at once
    for text in ("river", "ocean", "protocol:dcr seine"):
        assert indexed(search, text) == brute_force(folder, text), text
    assert any(h[0] == "dcr.jsonl" for h in indexed(search, "ocean"))


def test_a_read_only_folder_and_cache_keep_the_search_in_memory(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Neither the run's folder nor the cache folder can hold an index: each path given for one lies under a
    # plain file, which fails as a read-only folder does, whoever runs the test (root writes into read-only folders).
    # The index, and the search with it, is kept in memory for the viewer's process.
    blocked = tmp_path / "a_file"
    blocked.write_bytes(b"")
    monkeypatch.setattr(index_store, "default_store", lambda path: blocked / f"{path.name}.index")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    client = TestClient(create_app(Library([folder])), base_url="http://127.0.0.1")
    page = client.get("/search", params={"q": "protocol:dcr seine"})
    assert page.status_code == 200, page.text
    assert page.text.count('class="search-run"') == 2 and 'class="search-hit"' in page.text
    assert client.get("/").status_code == 200  # the runs themselves are served
    assert not list(folder.glob(".*.index*")) and not blocked.read_bytes()


def test_opening_the_runs_builds_their_search_in_the_same_pass(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # One read of each file: the run list's index holds the search's rows, so the first search has nothing to
    # index (with INLINE at 0, any backlog would start a background build), and no search file is written.
    monkeypatch.setattr(Search, "INLINE", 0)
    reads: list[Path] = []
    scan = index_scan.IndexScan._scan

    def counted(self: index_scan.IndexScan, size: int, progress: Any = None) -> bool:
        reads.append(self.path)
        return scan(self, size, progress)

    monkeypatch.setattr(index_scan.IndexScan, "_scan", counted)
    library = Library([folder])
    client = TestClient(create_app(library), base_url="http://127.0.0.1")
    assert client.get("/").status_code == 200
    assert sorted(p.name for p in reads) == ["cx.jsonl", "dcr.jsonl", "rep.jsonl"]
    search = search_mod.search_of(library)
    assert search.ready() is None and search._thread is None
    page = client.get("/search", params={"q": "river"}).text
    assert 'class="search-hit"' in page and len(reads) == 3
    assert indexed(search, "role:examiner river") == brute_force(folder, "role:examiner river")
    assert not list(folder.glob(".*.search"))


def test_an_index_of_an_older_version_is_made_again(folder: Path) -> None:
    # A version-4 index file (no search rows, no item ids): its tables are made again and the run indexed afresh.
    import sqlite3

    from voirdire.web.index import TranscriptIndex
    from voirdire.web.ledger import SCHEMA

    dcr = folder / "dcr.jsonl"
    store = index_store.default_store(dcr)
    con = sqlite3.connect(store)
    older = SCHEMA.split("CREATE VIRTUAL TABLE")[0].replace(", item_id TEXT", "").replace(", protocol TEXT", "")
    con.executescript(older)
    con.executemany("INSERT INTO meta(k, v) VALUES (?, ?)", [("version", "4"), ("size", "0")])
    con.commit()
    con.close()
    index = TranscriptIndex(dcr)
    assert index.refresh() and index.count() == 400
    search = Search(Library([dcr]))
    expected = [hit for hit in brute_force(folder, "seine") if hit[0] == "dcr.jsonl"]
    assert indexed(search, "seine") == expected and expected
