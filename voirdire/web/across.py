"""One item across runs: every session of an item in the viewed runs, side by side, and where they diverge.

From a session, ``/across?key=RUN&sid=SESSION`` (from the compare page, ``/across?key=RUN&item=ITEM``) finds
the other sessions of the same item in every run the viewer serves: the same item id (other models, other
protocols on the same dataset, and the repeats ``ITEM@rN`` of ``--repeats``, which keep the item's id) or the same
item text (the same claim asked under another id). Each is shown with its run's protocol and models, its verdict
and gold correctness, and the first turn at which its conversation differs from the session it was opened from
(turns compared by speaker and text, in order).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import BaseRoute, Route

from voirdire.chat import chat_of
from voirdire.reports import run_cost
from voirdire.transcript import Message, SessionRecord
from voirdire.web.index import Attempt, TranscriptIndex
from voirdire.web.render import render

SHOWN = 6  # conversations laid side by side (the table lists every session)


@dataclass
class Divergence:
    """Where a conversation first differs from the origin's: the turn number (1-based) and each side's seq there
    (None past a conversation's end); ``None`` as a whole when the two are the same throughout."""

    turn: int
    seq: int | None
    origin_seq: int | None


@dataclass
class Other:
    key: str
    index: TranscriptIndex
    attempt: Attempt
    record: SessionRecord | None
    protocol: str
    models: dict[str, str]
    divergence: Divergence | None
    origin: bool = False
    same_text: bool = False  # found by its item text, under another item id


def turns(record: SessionRecord | None) -> list[tuple[str, str, int]]:
    """A conversation as compared: each message's sender, text and seq, in order."""
    if record is None:
        return []
    return [(e.sender, e.content, e.seq) for e in sorted(record.events, key=lambda e: e.seq) if isinstance(e, Message)]


def divergence(origin: list[tuple[str, str, int]], other: list[tuple[str, str, int]]) -> Divergence | None:
    for n in range(max(len(origin), len(other))):
        a = origin[n] if n < len(origin) else None
        b = other[n] if n < len(other) else None
        if a is None or b is None or a[:2] != b[:2]:
            return Divergence(n + 1, b[2] if b else None, a[2] if a else None)
    return None


def sessions_of(library: Any, origin_key: str, origin: Attempt) -> list[Other]:
    """The origin first, then every other session of its item (by id or by item text) in the library's runs."""
    found: list[Other] = []
    for key, index in library.indexes():
        try:
            index.refresh()
            header = index.header()
        except Exception:  # a run that cannot be read is left out here; its own page says why
            continue
        for a in index.sessions():
            is_origin = key == origin_key and a.sid == origin.sid
            same_id = origin.item_id is not None and a.item_id == origin.item_id
            same_text = bool(origin.title) and a.title == origin.title
            if not (is_origin or same_id or same_text):
                continue
            run_header = index.header(a.rid) or header
            found.append(
                Other(
                    key=key,
                    index=index,
                    attempt=a,
                    record=None,
                    protocol=run_header.protocol if run_header else "?",
                    models={role: b.spec for role, b in run_header.roles.items()} if run_header else {},
                    divergence=None,
                    origin=is_origin,
                    same_text=not same_id and not is_origin,
                )
            )
    found.sort(key=lambda o: not o.origin)
    return found


def across_page(pages: Any, request: Request) -> HTMLResponse:
    key, sid = request.query_params.get("key", ""), request.query_params.get("sid", "")
    index = pages.library.get(key)
    if index is None:
        raise HTTPException(404, f"no transcript {key!r} here")
    index.refresh()
    item = request.query_params.get("item")
    if not sid and item is not None:  # from the compare page: the item's session in this run
        sid = next((a.sid for a in index.sessions() if a.item_id == item), "")
    origin = index.session(sid)
    if origin is None:
        raise HTTPException(404, f"{key}: no session {sid!r}")
    found = sessions_of(pages.library, key, origin)
    base: list[tuple[str, str, int]] = []
    for n, o in enumerate(found):
        o.record = o.index.record(o.attempt.sid)
        if n == 0:
            base = turns(o.record)
        else:
            o.divergence = divergence(base, turns(o.record))
    sides = []
    for o in found[:SHOWN]:
        if o.record is not None:
            chat = chat_of(o.record, o.index.header(o.record.run_id))
            sides.append((o, chat, run_cost(chat.billed, pages.prices)))
    html = render("across.html", origin=found[0], found=found, sides=sides, shown=SHOWN, version="")
    return HTMLResponse(html)


def routes(pages: Any) -> list[BaseRoute]:
    return [Route("/across", lambda r: across_page(pages, r))]
