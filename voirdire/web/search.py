"""Search across runs: one query over every transcript the viewer serves, answered from each run's index.

The transcript index (``voirdire.web.index``) keeps the search's rows in its own SQLite file, written by the same
pass that counts the sessions: an FTS5 table with one row per turn a reader searches for, the item (role ``item``),
every message (its sender's role) and the verdict (role ``verdict``: the decision and its evidence), each naming its
session attempt. The attempt's row gives the item id, the decision and whether it is the attempt that counts
(``voirdire.transcript.counting_attempt``'s rule), the run header the protocol, so filters and the choice of
attempt are answered by SQL. Opening a run builds its search too: the first search waits for no second pass. The
index follows the file (only the bytes appended since are read; a rewritten file is indexed afresh), and a backlog
larger than ``Search.INLINE`` is indexed in the background while the page shows its progress.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import BaseRoute, Route

from voirdire.base import VoirdireError
from voirdire.transcript import current_labels, read_sidecar
from voirdire.web.errors import ViewerError
from voirdire.web.index import TranscriptIndex
from voirdire.web.records import END, HIT
from voirdire.web.render import render
from voirdire.web.search_query import QueryError, SearchQuery, parse

LIMIT = 500  # hits one results page shows
Labelled = tuple[bool, list[str]] | None  # a label filter: keep those items or leave them out, their ids


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


def hits(index: TranscriptIndex, q: SearchQuery, labelled: Labelled, limit: int | None) -> list[Hit]:
    """The hits of ``q`` in one run, in file order; ``labelled`` is (keep those items or leave them out, item ids)
    for a label filter."""
    rows = index.search_turns(q, labelled, limit)
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
    """Search over every transcript of a viewer's library; a large backlog is indexed in the background, the page
    shows its progress."""

    INLINE = 8 << 20  # bytes to index that a request waits for; more is built in the background

    def __init__(self, library: Any) -> None:
        self.library = library
        self._starting = threading.Lock()
        self._seen: set[Path] = set()
        self.building: Building | None = None
        self._thread: threading.Thread | None = None
        self.off: list[str] = []  # why the last query left runs out (a file gone or unreadable)

    def runs(self) -> list[tuple[str, TranscriptIndex]]:
        found = self.library.indexes()
        for _, index in found:
            if index.path not in self._seen:
                self._seen.add(index.path)
                with contextlib.suppress(OSError):  # the search's own file, kept before the index held its rows
                    index.path.with_name(f".{index.path.name}.search").unlink(missing_ok=True)
        return found

    def build(self, progress: Callable[[str, int, int], None] | None = None) -> list[str]:
        """Bring every run's index up to date, in one pass per file; the problems met (one line each)."""
        problems = []
        for key, index in self.runs():
            try:
                index.refresh((lambda done, total, key=key: progress(key, done, total)) if progress else None)
            except ViewerError as exc:
                problems.append(str(exc))
        return problems

    def ready(self) -> Building | None:
        """None when every index is up to date (a small backlog is indexed now); else the background build."""
        with self._starting:  # two requests at once start one build
            if self._thread is not None and self._thread.is_alive():
                return self.building
            runs = self.runs()
            backlog = sum(_stale(index) for _, index in runs)
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
        A run that cannot be read (its file gone) is left out, and why is in ``off``."""
        out = []
        left = limit
        self.off = []
        for key, index in self.runs():
            labelled = label_items(index.path, q.label) if q.label is not None else None
            try:
                found = hits(index, q, labelled, left)
            except ViewerError as exc:
                self.off.append(str(exc))
                continue
            if found:
                out.append(RunHits(key, index.path, found))
            if left is not None:
                left -= len(found)
                if left <= 0:
                    break
        return out


def _stale(index: TranscriptIndex) -> int:
    try:
        return index.stale()
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
