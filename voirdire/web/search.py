"""Search across runs: one query over every transcript the viewer serves, answered from a SQLite FTS5 index.

Each transcript gets its own index file beside it (``.<name>.search``, or in the user's cache folder when that
folder is read-only), holding one row per turn a reader searches for: the item (role ``item``), every message (its
sender's role) and the verdict (role ``verdict``: the decision and its evidence). A table of session attempts keeps
the item id, the run's protocol, the decision and which attempt counts (``voirdire.transcript.counting_attempt``'s
rule: the last attempt that reached a verdict, else the latest), so filters and the choice of attempt are answered
by SQL. The index follows the transcript index's rules (``voirdire.web.index``): it remembers the file it covered
(its device and inode), the size and modification time it saw, and a digest of the bytes before that size; it reads
only the bytes appended since, and starts afresh when the file was rewritten: another file put in its place (``sed
-i`` writes a new one), a shorter file, one of the same size modified since (a word rewritten in place), or one
whose last indexed bytes changed. A build is one streamed pass, committed every few thousand rows (memory stays
bounded by the batch, whatever the file's size), reporting the bytes done so far.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import BaseRoute, Route

from voirdire.base import VoirdireError
from voirdire.transcript import bounded_lines, current_labels, max_line_bytes, read_sidecar
from voirdire.web.errors import ViewerError
from voirdire.web.index import cache_store
from voirdire.web.render import render
from voirdire.web.search_query import QueryError, SearchQuery, parse

SEARCH_VERSION = 1
BATCH = 20_000  # rows inserted between commits (the memory a build holds)
_TAIL = 4096  # bytes before the indexed end whose digest proves the file was only appended to
LIMIT = 500  # hits one results page shows
HIT, END = "\x02", "\x03"  # snippet markers (control characters, never kept in indexed text)

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v TEXT);
CREATE TABLE IF NOT EXISTS runs(rid TEXT PRIMARY KEY, protocol TEXT);
CREATE TABLE IF NOT EXISTS sessions(
  sid TEXT, rid TEXT, ord INTEGER, item_id TEXT, protocol TEXT, decision TEXT, counting INTEGER,
  UNIQUE(sid, rid));
CREATE VIRTUAL TABLE IF NOT EXISTS turns USING fts5(
  text, sid UNINDEXED, rid UNINDEXED, role UNINDEXED, kind UNINDEXED, seq UNINDEXED,
  tokenize="unicode61 remove_diacritics 0");
"""

Progress = Callable[[int, int], None]  # bytes indexed by this refresh so far, bytes it has to index


@dataclass
class Hit:
    """One matching turn (or, for a query of filters only, one matching session)."""

    sid: str
    rid: str
    role: str
    kind: str
    seq: int | None
    decision: str | None
    item_id: str | None
    protocol: str
    snippet: str = ""

    @property
    def anchor(self) -> str:
        """The session page's element this hit is: a message's bubble, the verdict, or the page's top."""
        if self.kind == "message" and self.seq is not None:
            return f"m{self.seq}"
        return "verdict" if self.kind == "verdict" else ""

    def parts(self) -> list[tuple[str, bool]]:
        """The snippet as (text, matched) pieces, for a template to escape and mark."""
        out: list[tuple[str, bool]] = []
        for n, piece in enumerate(self.snippet.split(HIT)):
            if n == 0:
                out.append((piece, False))
                continue
            hit, _, rest = piece.partition(END)
            out += [(hit, True), (rest, False)]
        return [(t, m) for t, m in out if t]


def _identity(st: os.stat_result) -> str:
    """Which file this is (device and inode): a file put in another's place under its name is another."""
    return f"{st.st_dev}:{st.st_ino}"


def search_store(path: Path) -> Path:
    return path.with_name(f".{path.name}.search")


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def turn_text(rec: dict[str, Any]) -> tuple[str, str] | None:
    """The role and searchable text of one transcript record, or None when it is not a searched turn."""
    kind = rec.get("kind")
    if kind == "session_start":
        return "item", "\n".join(_strings(rec.get("item") or {}))
    if kind == "message" and isinstance(rec.get("content"), str):
        return str(rec.get("sender") or ""), rec["content"]
    if kind == "verdict":
        evidence = rec.get("evidence") or []
        return "verdict", "\n".join([str(rec.get("decision")), *(e for e in evidence if isinstance(e, str))])
    return None


class RunSearch:
    """The search index of one transcript."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.store: Path | None = None
        self.lock = threading.Lock()
        self._protocols: dict[str, str] = {}
        self._seen: set[tuple[str, str]] = set()

    # ------------------------------------------------------------------ the file
    def _open(self) -> sqlite3.Connection:
        for store in (self.store, search_store(self.path), cache_store(self.path).with_suffix(".search")):
            if store is None:
                continue
            try:
                store.parent.mkdir(parents=True, exist_ok=True)
                con = sqlite3.connect(store, check_same_thread=False)
                con.executescript(SCHEMA)
                if self._meta(con).get("version") not in (None, str(SEARCH_VERSION)):
                    con.close()
                    store.unlink()
                    con = sqlite3.connect(store, check_same_thread=False)
                    con.executescript(SCHEMA)
            except (OSError, sqlite3.DatabaseError):
                with contextlib.suppress(OSError):
                    if store.exists() and store != self.store and _corrupt(store):
                        store.unlink()  # a damaged index is rebuilt; the next candidate is tried meanwhile
                continue
            self.store = store
            return con
        raise ViewerError(
            f"{self.path}: search is off for this run: no place to keep its index (its folder and the cache folder "
            "are read-only)"
        )

    @staticmethod
    def _meta(con: sqlite3.Connection) -> dict[str, str]:
        return dict(con.execute("SELECT k, v FROM meta").fetchall())

    def _tail(self, end: int) -> str:
        with self.path.open("rb") as fh:
            fh.seek(max(0, end - _TAIL))
            return hashlib.sha256(fh.read(end - max(0, end - _TAIL))).hexdigest()

    def _stat(self) -> os.stat_result:
        try:
            return self.path.stat()
        except OSError as exc:
            raise ViewerError(f"{self.path}: {exc.strerror or exc}") from None

    def _rewritten(self, meta: dict[str, str], st: os.stat_result) -> bool:
        """Whether the file is no longer (a longer copy of) the one the index covers, by what its metadata says."""
        done = int(meta.get("size", 0))
        if not done:
            return False
        if meta.get("path") != str(self.path.resolve()) or meta.get("file") != _identity(st) or st.st_size < done:
            return True
        # The same size as all it indexed, modified since: written in place (an append makes it longer).
        return st.st_size == done and meta.get("mtime") not in ("", str(st.st_mtime_ns))

    def _start(self, con: sqlite3.Connection) -> tuple[int, os.stat_result]:
        """Where this index's reading begins (0 after clearing a rewritten file's index) and the file's state."""
        st = self._stat()
        meta = self._meta(con)
        done = int(meta.get("size", 0))
        if done and (self._rewritten(meta, st) or self._tail(done) != meta.get("tail")):
            with con:
                for table in ("meta", "runs", "sessions", "turns"):
                    con.execute(f"DELETE FROM {table}")  # our own table names
            self._protocols, self._seen, done = {}, set(), 0
        return done, st

    def stale(self) -> int:
        """Bytes of the transcript not indexed yet (the whole file when it was rewritten)."""
        with self.lock:
            con = self._open()
            try:
                meta = self._meta(con)
            finally:
                con.close()
        st = self._stat()
        if self._rewritten(meta, st):
            return st.st_size
        return max(0, st.st_size - int(meta.get("size", 0)))

    def refresh(self, progress: Progress | None = None) -> int:
        """Index the whole lines appended since the last refresh (everything, after a rewrite); the bytes read."""
        with self.lock:
            con = self._open()
            try:
                start, st = self._start(con)
                if not self._protocols:
                    self._protocols = dict(con.execute("SELECT rid, protocol FROM runs").fetchall())
                return self._scan(con, start, st, progress) - start
            finally:
                con.close()

    def _scan(self, con: sqlite3.Connection, start: int, st: os.stat_result, progress: Progress | None) -> int:
        size = st.st_size
        rows: list[tuple[str, str, str, str, str, int | None]] = []
        pos = start
        with self.path.open("rb") as fh:
            fh.seek(start)
            for raw in bounded_lines(fh, max_line_bytes()):
                length = raw if isinstance(raw, int) else len(raw)
                if pos + length > size or (isinstance(raw, bytes) and not raw.endswith(b"\n")):
                    break  # a line still being written waits for the next refresh
                if isinstance(raw, bytes) and length > 1:
                    self._line(con, raw, rows)
                pos += length
                if len(rows) >= BATCH:
                    self._commit(con, rows, pos, st)
                    if progress:
                        progress(pos - start, size - start)
        self._commit(con, rows, pos, st)
        if progress:
            progress(pos - start, size - start)
        return pos

    def _commit(self, con: sqlite3.Connection, rows: list[Any], pos: int, st: os.stat_result) -> None:
        con.executemany("INSERT INTO turns(text, sid, rid, role, kind, seq) VALUES (?,?,?,?,?,?)", rows)
        meta = {"version": str(SEARCH_VERSION), "path": str(self.path.resolve()), "size": str(pos)}
        # The file as it was when the scan began; its modification time only when the index covers all of it (a
        # torn last line left unread is cut later, which changes the time and not what was indexed).
        meta |= {"file": _identity(st), "mtime": str(st.st_mtime_ns) if pos == st.st_size else ""}
        meta["tail"] = self._tail(pos) if pos else ""
        con.executemany("INSERT OR REPLACE INTO meta(k, v) VALUES (?, ?)", meta.items())
        con.commit()
        rows.clear()
        if len(self._seen) > 50_000:  # attempts met lately; older ones are looked up (INSERT OR IGNORE)
            self._seen.clear()

    def _line(self, con: sqlite3.Connection, raw: bytes, rows: list[Any]) -> None:
        try:
            rec = json.loads(raw)
        except ValueError:
            return  # the transcript index names unreadable lines among the run's problems
        if not isinstance(rec, dict):
            return
        rid, sid = rec.get("run_id"), rec.get("session_id")
        if rec.get("kind") == "header" and isinstance(rid, str):
            self._protocols[rid] = str(rec.get("protocol") or "")
            con.execute("INSERT OR REPLACE INTO runs(rid, protocol) VALUES (?, ?)", (rid, self._protocols[rid]))
            return
        if not isinstance(rid, str) or not isinstance(sid, str):
            return
        turn = turn_text(rec)
        if turn is None and (sid, rid) in self._seen:
            return
        self._attempt(con, sid, rid, rec)
        if turn is not None:
            text = turn[1].replace(HIT, " ").replace(END, " ")
            seq = rec.get("seq") if isinstance(rec.get("seq"), int) else None
            rows.append((text, sid, rid, turn[0], str(rec["kind"]), seq))

    def _attempt(self, con: sqlite3.Connection, sid: str, rid: str, rec: dict[str, Any]) -> None:
        """Keep the attempt's row: item id, decision, and whether it is the one that counts."""
        kind = rec.get("kind")
        if (sid, rid) not in self._seen:
            self._seen.add((sid, rid))
            cur = con.execute(
                "INSERT OR IGNORE INTO sessions(sid, rid, ord, protocol, counting) "
                "VALUES (?, ?, (SELECT count(*) FROM sessions WHERE sid = ?), ?, 0)",
                (sid, rid, sid, self._protocols.get(rid, "")),
            )
            if cur.rowcount and not con.execute(
                "SELECT 1 FROM sessions WHERE sid = ? AND decision IS NOT NULL", (sid,)
            ).fetchone():
                con.execute("UPDATE sessions SET counting = (rid = ?) WHERE sid = ?", (rid, sid))
        if kind == "session_start" and rec.get("item_id") is not None:
            con.execute("UPDATE sessions SET item_id = ? WHERE sid = ? AND rid = ?", (str(rec["item_id"]), sid, rid))
        elif kind == "verdict" and "decision" in rec:
            con.execute("UPDATE sessions SET decision = ? WHERE sid = ? AND rid = ?", (str(rec["decision"]), sid, rid))
            con.execute(
                "UPDATE sessions SET counting = (ord = (SELECT max(ord) FROM sessions WHERE sid = ? AND decision "
                "IS NOT NULL)) WHERE sid = ?",
                (sid, sid),
            )

    # ------------------------------------------------------------------ asking
    def query(self, q: SearchQuery, labelled: tuple[bool, list[str]] | None, limit: int | None) -> list[Hit]:
        """The hits of ``q`` in file order: turns of counting attempts that hold every phrase and pass the
        filters; ``labelled`` is (keep those items or leave them out, item ids) for a label filter."""
        where, args = ["s.counting = 1"], []
        if q.verdict is not None:
            where.append("lower(s.decision) = ?")
            args.append(q.verdict)
        if q.protocol is not None:
            where.append("lower(s.protocol) = ?")
            args.append(q.protocol)
        if labelled is not None:
            keep, items = labelled
            inside = "s.item_id IN (SELECT value FROM json_each(?))"
            where.append(inside if keep else f"(s.item_id IS NULL OR NOT {inside})")
            args.append(json.dumps(items))
        if q.role is not None:
            where.append("lower(t.role) = ?")
            args.append(q.role)
        if q.phrases:
            sql = (
                f"SELECT t.sid, t.rid, t.role, t.kind, t.seq, s.decision, s.item_id, s.protocol, "
                f"snippet(turns, 0, '{HIT}', '{END}', '…', 24) FROM turns t JOIN sessions s "
                "ON s.sid = t.sid AND s.rid = t.rid WHERE turns MATCH ? AND " + " AND ".join(where)
            )
            args.insert(0, q.fts())
        elif q.role is not None:
            sql = (
                "SELECT t.sid, t.rid, t.role, t.kind, t.seq, s.decision, s.item_id, s.protocol, substr(t.text, 1, 200) "
                "FROM turns t JOIN sessions s ON s.sid = t.sid AND s.rid = t.rid WHERE " + " AND ".join(where)
            )
        else:
            sql = (
                "SELECT s.sid, s.rid, '', 'session', NULL, s.decision, s.item_id, s.protocol, '' FROM sessions s "
                "WHERE " + " AND ".join(where)
            )
        sql += " ORDER BY " + ("t.rowid" if q.phrases or q.role is not None else "s.rowid")
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        with self.lock:
            con = self._open()
            try:
                if q.protocol is not None and not con.execute(
                    "SELECT 1 FROM runs WHERE lower(protocol) = ?", (q.protocol,)
                ).fetchone():
                    return []  # no run of that protocol here: its turns are not scanned
                rows = con.execute(sql, args).fetchall()
            except sqlite3.OperationalError as exc:
                raise QueryError(f"search: {exc}") from None
            finally:
                con.close()
        return [Hit(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7] or "", r[8] or "") for r in rows]


def label_items(path: Path, label: str) -> tuple[bool, list[str]]:
    """For ``label:X``: whether to keep (True) or leave out (False) the returned item ids, from the labels sidecar
    (each annotator's latest label of an item counts)."""
    try:
        current = current_labels(read_sidecar(path)).values()
    except VoirdireError as exc:  # a sidecar with a bad line: the query says which
        raise QueryError(str(exc)) from None
    if label in ("any", "none"):
        return label == "any", sorted({x.item_id for x in current})
    return True, sorted({x.item_id for x in current if x.reading == label})


def _corrupt(store: Path) -> bool:
    try:
        con = sqlite3.connect(store)
        try:
            con.execute("SELECT count(*) FROM meta").fetchone()
        finally:
            con.close()
    except sqlite3.DatabaseError:
        return True
    return False


@dataclass
class Building:
    """A build in progress, as the search page shows it."""

    done: int = 0
    total: int = 0
    runs: int = 0
    current: str = ""
    error: str | None = None
    finished: bool = False
    errors: list[str] = field(default_factory=list)


@dataclass
class RunHits:
    """One run's hits, as the results page groups them."""

    key: str
    path: Path
    hits: list[Hit]


class Search:
    """Search over every transcript of a viewer's library; a large build runs in the background, the page shows
    its progress."""

    INLINE = 8 << 20  # bytes to index that a request waits for; more is built in the background

    def __init__(self, library: Any) -> None:
        self.library = library
        self._runs: dict[Path, RunSearch] = {}
        self._lock = threading.Lock()
        self._starting = threading.Lock()
        self.building: Building | None = None
        self._thread: threading.Thread | None = None
        self.off: list[str] = []  # why the last query left runs out (no index could be kept for them)

    def runs(self) -> list[tuple[str, RunSearch]]:
        with self._lock:
            out = []
            for key, index in self.library.indexes():
                path = index.path.resolve()
                if path not in self._runs:
                    self._runs[path] = RunSearch(index.path)
                out.append((key, self._runs[path]))
            return out

    def build(self, progress: Callable[[str, int, int], None] | None = None) -> list[str]:
        """Bring every run's index up to date, in one pass per file; the problems met (one line each)."""
        problems = []
        for key, run in self.runs():
            try:
                run.refresh((lambda done, total, key=key: progress(key, done, total)) if progress else None)
            except ViewerError as exc:
                problems.append(str(exc))
        return problems

    def ready(self) -> Building | None:
        """None when every index is up to date (a small backlog is indexed now); else the background build."""
        with self._starting:  # two requests at once start one build
            if self._thread is not None and self._thread.is_alive():
                return self.building
            runs = self.runs()
            backlog = sum(_stale(run) for _, run in runs)
            if backlog > self.INLINE:
                self.building = Building(total=backlog, runs=len(runs))
                self._thread = threading.Thread(target=self._background, name="voirdire-search-build", daemon=True)
                self._thread.start()
                return self.building
        self.build()
        return None

    def _background(self) -> None:
        b = self.building
        assert b is not None
        finished: dict[str, int] = {}  # run -> bytes of it indexed so far

        def progress(key: str, done: int, total: int) -> None:
            b.current = key
            finished[key] = done
            b.done = min(sum(finished.values()), b.total)

        try:
            b.errors = self.build(progress)
        except Exception as exc:  # shown on the page instead of lost in a thread
            b.error = f"{type(exc).__name__}: {exc}"
        b.finished = True

    def query(self, q: SearchQuery, limit: int | None = 500) -> list[RunHits]:
        """The hits of ``q`` in every run, grouped by run (runs without hits left out), at most ``limit`` in all.
        A run whose index cannot be kept or read (a read-only folder and cache, a file gone) is left out, and why
        is in ``off``."""
        out = []
        left = limit
        self.off = []
        for key, run in self.runs():
            labelled = label_items(run.path, q.label) if q.label is not None else None
            try:
                hits = run.query(q, labelled, left)
            except ViewerError as exc:
                self.off.append(str(exc))
                continue
            if hits:
                out.append(RunHits(key, run.path, hits))
            if left is not None:
                left -= len(hits)
                if left <= 0:
                    break
        return out


def _stale(run: RunSearch) -> int:
    try:
        return run.stale()
    except (OSError, ViewerError):
        return 0


_searches: dict[int, Search] = {}  # one per library (a viewer serves one)


def search_of(library: Any) -> Search:
    return _searches.setdefault(id(library), Search(library))


def search_page(pages: Any, request: Request) -> HTMLResponse:
    """``/search?q=...``: the query over every run, hits grouped by run; the build's progress while it runs."""
    text = request.query_params.get("q", "")
    search = search_of(pages.library)
    problem, groups, building, off = None, [], None, []
    try:
        q = parse(text)
        if not q.empty:
            building = search.ready()
            if building is None:
                groups = search.query(q, LIMIT)
                off = search.off
    except QueryError as exc:
        problem = str(exc)
    shown = sum(len(g.hits) for g in groups)
    return HTMLResponse(
        render(
            "search.html", text=text, problem=problem, groups=groups, building=building, shown=shown, limit=LIMIT,
            version="", off=off,
        ),
        status_code=400 if problem else 200,
    )


def routes(pages: Any) -> list[BaseRoute]:
    return [Route("/search", lambda r: search_page(pages, r))]
