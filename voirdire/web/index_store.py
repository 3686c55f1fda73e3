"""Where a transcript index (``voirdire.web.index``) keeps what it read: the SQLite ledger beside the transcript,
or in the user's cache folder when that folder is read-only (``voirdire.web.ledger``), with the size, lines and
digest it covered (its meta), so that a new process takes it up and reads only what was appended since."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

from voirdire.base import user_cache
from voirdire.transcript import RunHeader
from voirdire.web.attempt import Attempt, HeaderRef, attempt_of
from voirdire.web.ledger import LEDGER_VERSION, Ledger, Turn


def default_store(path: Path) -> Path:
    return path.with_name(f".{path.name}.index")


def cache_store(path: Path) -> Path:
    return user_cache() / "view" / (hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:24] + ".index")


class IndexStore:
    """An index's state and its ledger: opened once, its meta restored and saved, cleared when the file is read
    afresh. ``voirdire.web.index_scan.IndexScan`` fills it; ``voirdire.web.index.TranscriptIndex`` reads it."""

    def __init__(self, path: str | Path, *, store: Path | None = None, persist: bool = True) -> None:
        self.path = Path(path)
        self.store = store or default_store(self.path)
        self.persist = persist
        self.size = 0  # bytes indexed (whole lines only)
        self.lines = 0
        self.mtime_ns = 0
        self.file = ""  # the transcript's device and inode when indexed ("" unknown): another file in its place
        self.whole = False  # whether the index covered all of the file when ``mtime_ns`` was taken
        self.headers: list[HeaderRef] = []
        self.problems: list[str] = []
        self._tail_digest = ""
        self._hints: tuple[str, ...] = ()
        self._gold = ""  # the verdict statistic that says whether it agrees with gold (display hints)
        self._header_cache: dict[str, RunHeader] = {}
        self._lock = threading.RLock()
        self._loaded = False
        self._rebuilt = True  # False while the rows come from an index file (anyone could have edited it)
        self._ledger: Ledger | None = None
        # The attempts the lines being read touch, written to the ledger every BATCH lines (the memory a scan holds)
        self._batch: dict[tuple[str, str], Attempt] = {}
        self._ids: dict[tuple[str, str], tuple[int, int]] = {}  # aid, sord of each attempt in the batch
        self._kin: dict[str, list[list[Any]]] = {}  # sid -> [aid, rid, sord, reached a verdict] of its attempts
        self._next = (1, 0)  # the next attempt's aid, the next session's sord
        self._starts: dict[tuple[str, str], bytes] = {}  # this batch's session_start lines, for the report
        self._turns: list[Turn] = []  # this batch's rows of the search across runs
        # What pages read of the whole run, kept until the file changes: the counting attempts in order (built only
        # when a page asks for all of them), the runs list's sums, and ``derived`` values.
        self._order: list[Attempt] | None = None
        self._totals: dict[str, Any] | None = None
        self._derived: dict[str, Any] = {}

    def _reset(self) -> None:
        self._changed()
        self.size = self.lines = 0
        self.headers, self.problems = [], []
        self._tail_digest = ""
        self._header_cache = {}
        self._batch, self._ids, self._kin, self._starts, self._turns = {}, {}, {}, {}, []
        self._next = (1, 0)
        if self._ledger is not None:
            self._ledger.clear()

    def _changed(self) -> None:
        self._order = self._totals = None
        self._derived = {}

    def _open(self) -> None:
        """Open the ledger (beside the transcript, else in the cache; in memory without ``persist``) and take
        what it covered, once; a ledger of another file, version or shape is cleared."""
        if self._loaded:
            return
        self._loaded = True
        if not self.persist:
            self._ledger = Ledger.open(None)
            return
        try:
            places = dict.fromkeys((self.store, default_store(self.path), cache_store(self.path)))
            self._ledger = Ledger.open(list(places))
        except OSError:
            self._ledger = Ledger.open(None)  # nowhere to keep it: kept for this process only
            return
        self.store = self._ledger.store or self.store
        try:
            self._restore(self._ledger.meta())
        except (ValueError, TypeError, KeyError, sqlite3.Error):
            self._reset()

    def _restore(self, meta: dict[str, str]) -> None:
        assert self._ledger is not None
        if "size" not in meta:
            self._reset()
            return
        if meta.get("version") != LEDGER_VERSION or meta.get("path") != str(self.path.resolve()):
            raise ValueError("another index")
        size, lines, mtime_ns = int(meta["size"]), int(meta["lines"]), int(meta["mtime_ns"])
        hints, problems = json.loads(meta["hints"]), json.loads(meta["problems"])
        if not (isinstance(hints, list) and isinstance(problems, list) and min(size, lines, mtime_ns) >= 0):
            raise ValueError("meta")
        headers = self._ledger.headers()
        for rid, pos, length in headers:
            if not (isinstance(rid, str) and type(pos) is int and type(length) is int):
                raise ValueError("headers")
        self.size, self.lines, self.mtime_ns = size, lines, mtime_ns
        self.file, self.whole = str(meta.get("file", "")), meta.get("whole") == "1"
        self._tail_digest, self._gold = str(meta["tail"]), str(meta["gold"])
        self._hints = tuple(str(h) for h in hints)
        self.problems = [str(p) for p in problems]
        self.headers = [HeaderRef(*h) for h in headers]
        self._next = self._ledger.ends()
        self._changed()
        self._rebuilt = False  # its rows are checked as they are read, its spans against the file

    def _save_meta(self) -> None:
        assert self._ledger is not None
        self._ledger.set_meta(
            {
                "version": LEDGER_VERSION,
                "path": str(self.path.resolve()),
                "size": str(self.size),
                "lines": str(self.lines),
                "mtime_ns": str(self.mtime_ns),
                "file": self.file,
                "whole": "1" if self.whole else "0",
                "tail": self._tail_digest,
                "hints": json.dumps(list(self._hints)),
                "gold": self._gold,
                "problems": json.dumps(self.problems[-20:]),
            }
        )
        self._ledger.commit()

    def _attempt_of(self, text: Any) -> Attempt:
        """An attempt from its ledger row; checked (``Forged`` if it does not check out) unless this process
        wrote every row itself."""
        return attempt_of(text, trusted=self._rebuilt)
