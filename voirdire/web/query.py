"""Which sessions of a run the sessions page lists: filters, free-text search and paging, from query parameters."""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from urllib.parse import urlencode

from voirdire.web.index import Attempt, TranscriptIndex

PAGE_SIZE = 50
CHOICES = {
    "status": ("", "finished", "running", "error"),
    "accepted": ("", "yes", "no", "none"),
    "gold": ("", "right", "wrong", "unknown"),
    "failures": ("", "with", "without"),
    "errors": ("", "with", "without"),
    "labels": ("", "labelled", "not labelled", "disagrees", "people disagree"),  # people's labels (web/review.py)
}


@dataclass(frozen=True)
class Query:
    """The sessions page's parameters; an empty value means no filter."""

    verdict: str = ""
    status: str = ""
    accepted: str = ""
    gold: str = ""
    failures: str = ""
    errors: str = ""
    labels: str = ""
    q: str = ""
    page: int = 1

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> Query:
        values: dict[str, object] = {}
        for f in fields(cls):
            raw = str(params.get(f.name, "")).strip()
            if f.name == "page":
                # ASCII digits only ("²".isdigit() too), and few enough of them: 5,000 digits are page 1, not a 500
                values["page"] = max(1, int(raw)) if raw.isascii() and raw.isdigit() and len(raw) <= 9 else 1
            elif f.name in CHOICES:
                values[f.name] = raw if raw in CHOICES[f.name] else ""
            else:
                values[f.name] = raw[:200]
        return cls(**values)  # type: ignore[arg-type]

    def keeps(self, a: Attempt) -> bool:
        if self.verdict and a.decision != self.verdict:
            return False
        if self.status and a.status != self.status:
            return False
        if self.accepted and {"yes": True, "no": False, "none": None}[self.accepted] is not a.accepted:
            return False
        if self.gold and {"right": True, "wrong": False, "unknown": None}[self.gold] is not a.correct:
            return False
        if self.failures and (a.parse_failures > 0) != (self.failures == "with"):
            return False
        return not self.errors or (a.errors > 0) != (self.errors == "without")

    def where(self) -> tuple[str, list[object]]:
        """``keeps`` as SQL over the index's columns (``voirdire.web.ledger``): the same sessions, chosen by the
        index without reading them."""
        sql, args = [], []
        if self.verdict:
            sql.append("decision = ?")
            args.append(self.verdict)
        if self.status:
            sql.append("status = ?")
            args.append(self.status)
        flags = (("accepted", self.accepted, ("yes", "no")), ("correct", self.gold, ("right", "wrong")))
        for column, choice, words in flags:
            if choice:
                sql.append(f"{column} IS NULL" if choice not in words else f"{column} = {1 - words.index(choice)}")
        for column, choice in (("parse_failures", self.failures), ("errors", self.errors)):
            if choice:
                sql.append(f"{column} {'>' if choice == 'with' else '<='} 0")
        return " AND ".join(sql), args

    def url(self, **changes: object) -> str:
        """The query string of this query with ``changes`` (the page goes back to 1 unless given)."""
        changed = replace(self, **{"page": 1, **changes})  # type: ignore[arg-type]
        params = {f.name: getattr(changed, f.name) for f in fields(changed)}
        return "?" + urlencode({k: v for k, v in params.items() if v and not (k == "page" and v == 1)})


@dataclass
class Page:
    rows: list[Attempt]
    total: int  # sessions that pass the filters
    all: int  # sessions in the run
    page: int
    pages: int
    decisions: list[str]


def select(index: TranscriptIndex, query: Query, keep: Callable[[Attempt], bool] | None = None) -> Page:
    """``keep``: a further filter from outside the transcript (``query.labels``: the labels sidecar's). Without it
    or a free-text search, the page is one SQL query of the index: the rows shown are the only ones read."""
    decisions = sorted(d for d, _ in index.decisions())
    if keep is None and not query.q:
        where, args = query.where()
        total = index.count(where, args)
        pages = max(1, math.ceil(total / PAGE_SIZE))
        page = min(query.page, pages)
        rows = index.page(where, args, PAGE_SIZE, (page - 1) * PAGE_SIZE)
        return Page(rows=rows, total=total, all=index.count(), page=page, pages=pages, decisions=decisions)
    attempts = index.sessions()
    kept = [a for a in attempts if query.keeps(a) and (keep is None or keep(a))]
    if query.q:
        kept = _search(index, query.q, kept)
    pages = max(1, math.ceil(len(kept) / PAGE_SIZE))
    page = min(query.page, pages)
    rows = kept[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    return Page(rows=rows, total=len(kept), all=len(attempts), page=page, pages=pages, decisions=decisions)


_FOUND: OrderedDict[tuple[int, int, str, tuple[str, ...]], list[Attempt]] = OrderedDict()
_FOUND_LOCK = threading.Lock()


def _search(index: TranscriptIndex, q: str, among: list[Attempt]) -> list[Attempt]:
    """``index.search``, remembered for the last few queries until the transcript grows (paging re-asks)."""
    key = (id(index), index.size, q, tuple(a.sid for a in among))
    with _FOUND_LOCK:
        if key in _FOUND:
            _FOUND.move_to_end(key)
            return _FOUND[key]
    found = index.search(q, among)
    with _FOUND_LOCK:
        _FOUND[key] = found
        while len(_FOUND) > 16:
            _FOUND.popitem(last=False)
    return found
