"""The SQLite file a transcript index (``voirdire.web.index``) keeps: one row per session attempt, so a page asks
for the rows it shows instead of holding a whole run.

Per attempt: its place (``aid``: order of first appearance; ``sord``: its session's first appearance), whether it
is the attempt that counts (``counting``, set by ``voirdire.transcript.counting_attempt``'s rule), the columns the
sessions list filters and the runs list adds up (status, decision, accepted, correct, parse failures, errors,
calls, tokens, model time, a human's calls, the item id), the whole attempt as JSON (``rows``) and each model's
billed tokens (``tallies``). ``turns`` is the search across runs (``voirdire.web.search``): an FTS5 table of the
items, messages and verdicts, each row naming its attempt's ``aid``. ``meta`` holds what the index covered (size,
lines, modification time, digest of the bytes before the end) and ``headers`` the run headers' offsets and
protocols. Accepted and correct are 1, 0, NULL for None, or 2 for a value that is no boolean (a garbled line), so a
filter keeps what ``voirdire.web.query.Query.keeps`` keeps.

The file is a cache: the index checks it against the transcript; one that does not open as SQLite is removed and
built again, one of another version made again. An index that must not write files (``persist=False``) keeps the
same tables in memory.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from voirdire.web.records import END, HIT
from voirdire.web.search_query import QueryError

if TYPE_CHECKING:
    from voirdire.web.search_query import SearchQuery

LEDGER_VERSION = "5"  # 5: the search's turns, item ids, header protocols (4: SQLite rows; 3: one JSON document)

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v TEXT);
CREATE TABLE IF NOT EXISTS headers(n INTEGER PRIMARY KEY, rid TEXT, pos INTEGER, length INTEGER, protocol TEXT);
CREATE TABLE IF NOT EXISTS attempts(
  aid INTEGER PRIMARY KEY, sid TEXT NOT NULL, rid TEXT NOT NULL, sord INTEGER NOT NULL,
  counting INTEGER NOT NULL DEFAULT 0, status TEXT, decision TEXT, accepted INTEGER, correct INTEGER,
  parse_failures INTEGER, errors INTEGER, calls INTEGER, prompt_tokens INTEGER, completion_tokens INTEGER,
  latency_s REAL, human INTEGER, item_id TEXT);
CREATE UNIQUE INDEX IF NOT EXISTS attempts_sid ON attempts(sid, rid);
CREATE INDEX IF NOT EXISTS attempts_order ON attempts(counting, sord);
CREATE INDEX IF NOT EXISTS attempts_verdicts ON attempts(counting, decision, accepted);
CREATE TABLE IF NOT EXISTS rows(aid INTEGER PRIMARY KEY, row TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tallies(
  aid INTEGER, n INTEGER, sord INTEGER, model TEXT, prompt INTEGER, completion INTEGER, requests INTEGER,
  PRIMARY KEY(aid, n));
CREATE VIRTUAL TABLE IF NOT EXISTS turns USING fts5(
  text, aid UNINDEXED, role UNINDEXED, kind UNINDEXED, seq UNINDEXED, tokenize="unicode61 remove_diacritics 0");
"""
_TABLES = ("meta", "headers", "attempts", "rows", "tallies", "turns")
COLUMNS = (
    "status", "decision", "accepted", "correct", "parse_failures", "errors", "calls", "prompt_tokens",
    "completion_tokens", "latency_s", "human", "item_id",
)  # fmt: skip

Turn = tuple[str, int, str, str, int | None]
"""One searched turn: its text, its attempt's aid, its role, its record's kind, its seq"""
Written = tuple[Any, ...]
"""aid, sid, rid, sord, the ``COLUMNS`` values, the attempt's JSON row, [(model, prompt, completion, requests)]"""


def flag(value: object) -> int | None:
    """A boolean as the ``accepted``/``correct`` columns keep it."""
    return None if value is None else 1 if value is True else 0 if value is False else 2


class Ledger:
    """One open index file (or an in-memory one); the caller serialises access (one lock per index)."""

    def __init__(self, con: sqlite3.Connection, store: Path | None) -> None:
        self.con = con
        self.store = store

    @classmethod
    def open(cls, candidates: Sequence[Path] | None) -> Ledger:
        """The first candidate that opens (and takes a write) as this version's index file; a file there that is
        not SQLite is removed first. None: in memory. Raises OSError when no candidate opens."""
        if candidates is None:
            return cls(_connect(":memory:"), None)
        for store in candidates:
            for _ in range(2):
                try:
                    store.parent.mkdir(parents=True, exist_ok=True)
                    return cls(_connect(str(store)), store)
                except sqlite3.DatabaseError as exc:
                    if not store.is_file() or (isinstance(exc, sqlite3.OperationalError) and not _damaged(store)):
                        break
                    with contextlib.suppress(OSError):
                        store.unlink()  # not an index file (an older format, or damaged): built again
                except OSError:
                    break
        raise OSError("no writable place for the index")

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.con.close()

    # ------------------------------------------------------------------ writing
    def clear(self) -> None:
        for table in _TABLES:
            self.con.execute(f"DELETE FROM {table}")  # our own table names
        self.con.commit()

    def meta(self) -> dict[str, str]:
        return {str(k): str(v) for k, v in self.con.execute("SELECT k, v FROM meta")}

    def set_meta(self, values: dict[str, str]) -> None:
        self.con.executemany("INSERT OR REPLACE INTO meta(k, v) VALUES (?, ?)", values.items())

    def headers(self) -> list[tuple[Any, ...]]:
        return self.con.execute("SELECT rid, pos, length FROM headers ORDER BY n").fetchall()

    def add_header(self, n: int, rid: str, pos: int, length: int, protocol: str) -> None:
        sql = "INSERT OR REPLACE INTO headers(n, rid, pos, length, protocol) VALUES (?, ?, ?, ?, ?)"
        self.con.execute(sql, (n, rid, pos, length, protocol))

    def add_turns(self, turns: Iterable[Turn]) -> None:
        """Rows of the search across runs: (text, aid, role, kind, seq)."""
        self.con.executemany("INSERT INTO turns(text, aid, role, kind, seq) VALUES (?, ?, ?, ?, ?)", turns)

    def kin(self, sid: str) -> list[tuple[int, str, int, bool]]:
        """Every stored attempt of ``sid``: aid, rid, sord, whether it reached a verdict; in order."""
        rows = self.con.execute(
            "SELECT aid, rid, sord, decision IS NOT NULL FROM attempts WHERE sid = ? ORDER BY aid", (sid,)
        )
        return [(int(aid), str(rid), int(sord), bool(done)) for aid, rid, sord, done in rows]

    def ends(self) -> tuple[int, int]:
        """The next attempt's aid and the next session's sord."""
        aid, sord = self.con.execute("SELECT max(aid), max(sord) FROM attempts").fetchone()
        return int(aid or 0) + 1, int(sord if sord is not None else -1) + 1

    def write(self, attempts: Iterable[Written]) -> None:
        rows, tallies, aids = [], [], []
        for aid, sid, rid, sord, columns, row, models in attempts:
            rows.append((aid, sid, rid, sord, *columns))
            aids.append((aid, row))
            tallies += [(aid, n, sord, *m) for n, m in enumerate(models)]
        marks = ", ".join("?" * (4 + len(COLUMNS)))
        self.con.executemany(
            f"INSERT INTO attempts(aid, sid, rid, sord, {', '.join(COLUMNS)}) VALUES ({marks}) ON CONFLICT(aid) DO "
            f"UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in COLUMNS)}",
            rows,
        )
        self.con.executemany("INSERT OR REPLACE INTO rows(aid, row) VALUES (?, ?)", aids)
        self.con.executemany("DELETE FROM tallies WHERE aid = ?", [(aid,) for aid, _ in aids])
        self.con.executemany("INSERT INTO tallies VALUES (?, ?, ?, ?, ?, ?, ?)", tallies)

    def set_counting(self, chosen: Iterable[tuple[str, int]]) -> None:
        """(sid, aid of the attempt that counts) for sessions whose attempts changed."""
        self.con.executemany("UPDATE attempts SET counting = (aid = ?) WHERE sid = ?", [(a, s) for s, a in chosen])

    def commit(self) -> None:
        self.con.commit()

    # ------------------------------------------------------------------ reading
    def row(self, aid: int) -> str | None:
        found = self.con.execute("SELECT row FROM rows WHERE aid = ?", (aid,)).fetchone()
        return None if found is None else found[0]

    def counting_rows(self, where: str = "", args: Sequence[Any] = (), limit: int = -1, offset: int = 0) -> list[Any]:
        """The JSON rows of the attempts that count and pass ``where`` (SQL over ``COLUMNS``), in session order."""
        sql = (
            "SELECT r.row FROM attempts a JOIN rows r ON r.aid = a.aid WHERE a.counting = 1"
            + (f" AND ({where})" if where else "")
            + " ORDER BY a.sord LIMIT ? OFFSET ?"
        )
        return [row for (row,) in self.con.execute(sql, (*args, limit, offset))]

    def session_rows(self, sid: str) -> list[Any]:
        """The JSON rows of every attempt at ``sid``, in order of appearance."""
        sql = "SELECT r.row FROM attempts a JOIN rows r ON r.aid = a.aid WHERE a.sid = ? ORDER BY a.aid"
        return [row for (row,) in self.con.execute(sql, (sid,))]

    def count(self, where: str = "", args: Sequence[Any] = ()) -> int:
        sql = "SELECT count(*) FROM attempts WHERE counting = 1" + (f" AND ({where})" if where else "")
        return int(self.con.execute(sql, tuple(args)).fetchone()[0])

    def attempts(self) -> int:
        return int(self.con.execute("SELECT count(*) FROM attempts").fetchone()[0])

    def decisions(self) -> list[tuple[str, int]]:
        """The decisions of the attempts that count, most frequent first (ties: the first seen first)."""
        rows = self.con.execute(
            "SELECT decision, count(*) AS n, min(sord) AS first FROM attempts WHERE counting = 1 AND decision IS NOT "
            "NULL GROUP BY decision ORDER BY n DESC, first"
        )
        return [(str(d), int(n)) for d, n, _ in rows]

    def verdict_words(self) -> dict[str, bool]:
        """Each decision of the attempts that count as the accept/reject it stood for: a decision that stood for
        both is left out. Read by seeks in the ``attempts_verdicts`` index (each distinct decision, then the least
        and the greatest accept/reject it stood for), so the cost follows the number of decisions, not of sessions."""
        rows = self.con.execute(
            "WITH RECURSIVE d(x) AS ("
            " SELECT min(decision) FROM attempts WHERE counting = 1"
            " UNION ALL SELECT (SELECT min(decision) FROM attempts WHERE counting = 1 AND decision > x)"
            " FROM d WHERE x IS NOT NULL) "
            "SELECT x,"
            " (SELECT min(accepted) FROM attempts WHERE counting = 1 AND decision = x AND accepted IS NOT NULL),"
            " (SELECT max(accepted) FROM attempts WHERE counting = 1 AND decision = x AND accepted IS NOT NULL) "
            "FROM d WHERE x IS NOT NULL"
        )
        return {str(d): bool(low) for d, low, high in rows if low is not None and low == high}

    def totals(self) -> dict[str, Any]:
        """The runs list's sums over the attempts that count."""
        names = ("sessions", "finished", "errors", "running", "parse_failures", "calls", "prompt_tokens",
                 "completion_tokens", "latency_s", "humans", "judged", "correct")  # fmt: skip
        row = self.con.execute(
            "SELECT count(*), total(status = 'finished'), total(status = 'error'), total(status = 'running'), "
            "total(parse_failures), total(calls), total(prompt_tokens), total(completion_tokens), total(latency_s), "
            "total(human = 1), total(correct IN (0, 1)), total(correct = 1) FROM attempts WHERE counting = 1"
        ).fetchone()
        return {n: (float(v) if n == "latency_s" else int(v)) for n, v in zip(names, row, strict=True)}

    def billed(self) -> dict[str, tuple[int, int, int]]:
        """Model label -> billed prompt tokens, completion tokens, requests over every attempt (resumed ones were
        paid for too), the models in the order a pass over the sessions meets them."""
        rows = self.con.execute(
            "SELECT model, total(prompt), total(completion), total(requests), "
            "min(printf('%015d%015d%09d', sord, aid, n)) AS first FROM tallies GROUP BY model ORDER BY first"
        )
        return {str(m): (int(p), int(c), int(r)) for m, p, c, r, _ in rows}

    def search(self, q: SearchQuery, labelled: tuple[bool, list[str]] | None, limit: int | None) -> list[Any]:
        """The search's hits in this run, in file order: (sid, rid, role, kind, seq, decision, item id, protocol,
        snippet) of each turn of an attempt that counts holding every phrase of ``q`` and passing its filters; for
        a query of filters only, one per session. ``labelled``: (keep those items or leave them out, item ids)."""
        protocol = "(SELECT h.protocol FROM headers h WHERE h.rid = a.rid ORDER BY h.n DESC LIMIT 1)"
        where, args = ["a.counting = 1"], []
        if q.verdict is not None:
            where.append("lower(a.decision) = ?")
            args.append(q.verdict)
        if q.protocol is not None:
            where.append(f"lower({protocol}) = ?")
            args.append(q.protocol)
        if labelled is not None:
            keep, items = labelled
            inside = "a.item_id IN (SELECT value FROM json_each(?))"
            where.append(inside if keep else f"(a.item_id IS NULL OR NOT {inside})")
            args.append(json.dumps(items))
        if q.role is not None:
            where.append("lower(t.role) = ?")
            args.append(q.role)
        found = f"a.decision, a.item_id, {protocol}"
        if q.phrases:
            where.insert(0, "turns MATCH ?")
            args.insert(0, q.fts())
            text = f"snippet(turns, 0, '{HIT}', '{END}', '…', 24)"
        else:
            text = "substr(t.text, 1, 200)"
        if q.phrases or q.role is not None:
            sql = (
                f"SELECT a.sid, a.rid, t.role, t.kind, t.seq, {found}, {text} FROM turns t JOIN attempts a "
                f"ON a.aid = t.aid WHERE {' AND '.join(where)} ORDER BY t.rowid"
            )
        else:
            sql = f"SELECT a.sid, a.rid, '', 'session', NULL, {found}, '' FROM attempts a WHERE {' AND '.join(where)} "
            sql += "ORDER BY a.aid"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        if (
            q.protocol is not None
            and not self.con.execute("SELECT 1 FROM headers WHERE lower(protocol) = ?", (q.protocol,)).fetchone()
        ):
            return []  # no run of that protocol here: its turns are not scanned
        try:
            return self.con.execute(sql, args).fetchall()
        except sqlite3.OperationalError as exc:  # a query FTS5 cannot read: the query's fault, not the index's
            raise QueryError(f"search: {exc}") from None

    def neighbours(self, sid: str) -> tuple[str | None, str | None]:
        # "+counting": looked up by its session (one row), not by scanning the counting rows' index
        at = self.con.execute("SELECT sord FROM attempts WHERE sid = ? AND +counting = 1", (sid,)).fetchone()
        if at is None:
            return None, None
        before = self.con.execute(
            "SELECT sid FROM attempts WHERE counting = 1 AND sord < ? ORDER BY sord DESC LIMIT 1", at
        ).fetchone()
        after = self.con.execute(
            "SELECT sid FROM attempts WHERE counting = 1 AND sord > ? ORDER BY sord LIMIT 1", at
        ).fetchone()
        return (before[0] if before else None), (after[0] if after else None)


def _connect(where: str) -> sqlite3.Connection:
    con = sqlite3.connect(where, check_same_thread=False)
    try:
        con.execute("PRAGMA synchronous = OFF")  # a cache: a crash leaves a file that is checked, or rebuilt
        if _version(con) not in (None, LEDGER_VERSION):
            for table in _TABLES:  # another version's tables (other columns): made again, then filled afresh
                con.execute(f"DROP TABLE IF EXISTS {table}")  # our own table names
        con.executescript(SCHEMA)
        con.execute("INSERT OR REPLACE INTO meta(k, v) VALUES ('opened', '1')")  # proves it takes a write
        con.commit()
    except BaseException:
        con.close()
        raise
    return con


def _version(con: sqlite3.Connection) -> str | None:
    """The ledger version an index file was written by; None for a new file."""
    try:
        found = con.execute("SELECT v FROM meta WHERE k = 'version'").fetchone()
    except sqlite3.OperationalError:  # no meta table: a new file
        return None
    return None if found is None else str(found[0])


def _damaged(store: Path) -> bool:
    """A file that is not an SQLite database (an error opening it says nothing of the folder's permissions)."""
    try:
        with store.open("rb") as fh:
            return fh.read(16) != b"SQLite format 3\x00"
    except OSError:
        return False
