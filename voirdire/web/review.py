"""Reviewing verdicts in the viewer: the review panel of a session page, the labelling queue
(``/run/<file>/review?sample=N&seed=S``) and the one request that writes (``POST /run/<file>/label``).

The viewer writes only here, and only the labels sidecar beside a transcript (``voirdire.transcript.sidecar``).
A write is a POST that carries this server's random token (made when the server starts, printed only into its own
pages, which another origin cannot read) and comes from the viewer's own origin: a request whose ``Origin`` is not
the viewer's, or whose ``Sec-Fetch-Site`` is anything but ``same-origin`` (a page on another local port is
``same-site``), is refused before its body is read. A label is checked (``review_run.ReviewRun.check``) before
anything is written; a refusal is a 400 with the reason.
"""

from __future__ import annotations

import secrets
import weakref
from collections.abc import Callable
from dataclasses import replace
from typing import Any
from urllib.parse import parse_qsl, urlencode

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from voirdire.base import CannotWrite, VoirdireError
from voirdire.chat import chat_of
from voirdire.transcript import append_label, current_labels, read_sidecar, sidecar_path, why_not_writable
from voirdire.web.index import Attempt, TranscriptIndex
from voirdire.web.render import render
from voirdire.web.review_run import Counts, LabelRefused, ReviewRun, count_labels, indexed_run, parse_sample, share

MAX_BODY = 32 * 1024  # bytes of a label request: a comment's 2,000 characters, escaped, and the rest
TOKEN_FIELD = "token"
TOKEN_HEADER = "x-voirdire-token"
_REVIEWS: weakref.WeakKeyDictionary[Any, Review] = weakref.WeakKeyDictionary()


class Review:
    """The review handlers of one viewer (``pages``: ``voirdire.web.app.Pages``) and its token."""

    def __init__(self, pages: Any) -> None:
        self.pages = pages
        self.token = secrets.token_urlsafe(32)

    async def label(self, request: Request) -> Response:
        why = cross_site(request)
        if why is not None:
            return refuse(request, 403, why)
        form = await small_form(request)
        given = request.headers.get(TOKEN_HEADER) or str(form.get(TOKEN_FIELD, ""))
        if not secrets.compare_digest(given.encode(), self.token.encode()):
            return refuse(request, 403, "missing or wrong token: reload the page and label again")
        key, index = self.pages.run_index(request)
        reason = why_not_writable(index.path)
        if reason is not None:
            return refuse(request, 409, f"labels cannot be written here: {reason}")
        try:
            rr = indexed_run(index)
            label = rr.check(form)
            append_label(index.path, label)
        except LabelRefused as exc:
            return refuse(request, 400, str(exc))
        except CannotWrite as exc:
            return refuse(request, 500, str(exc))
        except VoirdireError as exc:  # the transcript or its sidecar cannot be read
            return refuse(request, 400, str(exc))
        answer = {
            "saved": True, "verdict": label.verdict, "accepted": rr.words.get(label.verdict or ""),
            "reading": label.reading, "label": label.label, "annotator": label.annotator,
            "file": sidecar_path(index.path).name,
        }  # fmt: skip
        if wants_json(request):
            return JSONResponse(answer)
        back = str(form.get("back") or "")
        return RedirectResponse(back if back.startswith("/run/") else f"/run/{key}", status_code=303)

    def queue(self, request: Request) -> Response:
        key, index = self.pages.run_index(request)
        params = request.query_params
        if "sample" not in params:
            return page("review.html", key=key, choose=True, items=_items(index), version="")
        try:
            sample = parse_sample(params.get("sample", ""), params.get("seed", ""))
            rr = indexed_run(index)
            drawn = rr.sample(sample.size, sample.seed)
            labels = rr.labels()
        except VoirdireError as exc:
            raise HTTPException(400, str(exc)) from None
        who = params.get("annotator", "")
        latest = current_labels(labels)
        done = [x for x in drawn if (x["item_id"], who) in latest]
        todo = [x for x in drawn if (x["item_id"], who) not in latest]
        blind = params.get("blind") == "1"
        here = {"sample": sample.size, "seed": sample.seed, **({"blind": "1"} if blind else {})}
        ids = [x["item_id"] for x in drawn]
        counts = rr.counts(labels)
        context: dict[str, Any] = {
            "key": key, "choose": False, "sample": sample, "blind": blind, "annotator": who, "total": len(drawn),
            "done": len(done), "queue_url": f"/run/{key}/review?{urlencode(here)}",
            "people": rr.people(labels, ids) if counts.annotators >= 2 else None,
            "people_disagree": [i for i in ids if i in counts.people_disagree], "counts": counts,
            "first_session": {x["item_id"]: x["session_id"] for x in drawn}, "version": "",
        }  # fmt: skip
        if who and todo:
            context.update(self.current(key, index, rr, todo[0]["session_id"], blind, context["queue_url"], sample))
        return page("review.html", **context)

    def current(
        self, key: str, index: TranscriptIndex, rr: ReviewRun, sid: str, blind: bool, next_url: str, sample: Any
    ) -> dict[str, Any]:
        """The item a queue shows now: its chat (not when blind) and its review panel. The verdict's right/wrong
        against gold is never shown: the gold is what the reviewer's label is compared with (for EVOUNA it is the
        very human judgment being collected), so the queue does not lead the reviewer to it. Blind, the chat and
        the verdict are hidden, the item and its references (gold answers, reference text) kept."""
        attempt = index.session(sid)
        record = index.record(sid)
        if attempt is None or record is None:
            raise HTTPException(404, f"{key}: no session {sid!r}")
        chat = chat_of(record, index.header(record.run_id))
        return {
            "chat": chat, "attempt": replace(attempt, correct=None),
            "review": self.panel(key, index, attempt, rr=rr, blind=blind, next_url=next_url, sample=sample),
        }  # fmt: skip

    def panel(
        self, key: str, index: TranscriptIndex, attempt: Attempt, *, rr: ReviewRun | None = None,
        blind: bool = False, next_url: str | None = None, sample: Any = None,
    ) -> dict[str, Any]:  # fmt: skip
        """What a review panel shows: the token, the verdict set, the labels given so far, or why none can be."""
        why = why_not_writable(index.path)
        words: dict[str, bool] = {}
        given: list[Any] = []
        if attempt.decision is None or attempt.accepted is None:
            why = why or "this session has no accept/reject verdict to review"
        else:
            words = rr.words if rr is not None else verdict_set(index)  # a session page reads no whole run
            item = attempt.item_id or attempt.sid
            try:
                given = [x for (i, _), x in current_labels(read_sidecar(index.path)).items() if i == item]
            except VoirdireError as exc:
                why = str(exc)
        return {
            "key": key, "sid": attempt.sid, "token": self.token, "why": why, "words": sorted(words),
            "accepted": words, "blind": blind, "next_url": next_url, "sample": sample, "given": given,
            "decision": None if blind else attempt.decision, "verdict_accepted": None if blind else attempt.accepted,
        }  # fmt: skip


def routes(pages: Any) -> list[BaseRoute]:
    """The review routes of the viewer whose handlers are ``pages`` (before the session route)."""
    review = Review(pages)
    _REVIEWS[pages] = review
    return [
        Route("/run/{key}/review", review.queue),
        Route("/run/{key}/label", review.label, methods=["POST"]),
    ]


def panel(pages: Any, key: str, index: TranscriptIndex, attempt: Attempt) -> dict[str, Any] | None:
    """The review panel of a session page (None where the viewer has no review routes)."""
    review = _REVIEWS.get(pages)
    return None if review is None else review.panel(key, index, attempt)


def cross_site(request: Request) -> str | None:
    """Why a write request is not from the viewer's own pages, or None."""
    site = request.headers.get("sec-fetch-site")
    if site is not None and site != "same-origin":
        return f"cross-site request refused (Sec-Fetch-Site: {site[:40]}): label from the viewer's own pages"
    origin = request.headers.get("origin")
    if origin is not None and origin != f"http://{request.headers.get('host', '')}":
        return f"cross-origin request refused (Origin: {origin[:100]}): label from the viewer's own pages"
    return None


async def small_form(request: Request) -> dict[str, str]:
    """The url-encoded body of a label request, at most ``MAX_BODY`` bytes (else 413)."""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise HTTPException(413, f"label request larger than {MAX_BODY} bytes")
    try:
        return dict(parse_qsl(body.decode("utf-8"), keep_blank_values=True, max_num_fields=32))
    except (UnicodeDecodeError, ValueError):
        raise HTTPException(400, "label request: not a url-encoded UTF-8 form") from None


def wants_json(request: Request) -> bool:
    return "application/json" in request.headers.get("accept", "")


def refuse(request: Request, status: int, message: str) -> Response:
    if wants_json(request):
        return JSONResponse({"saved": False, "error": message}, status_code=status)
    return page("error.html", status_code=status, status=status, detail=message, version="")


LABEL_FILTERS = ("", "labelled", "not labelled", "disagrees", "people disagree")  # the sessions list's filter


def index_counts(index: TranscriptIndex) -> Counts | None:
    """The labels of the run behind ``index`` counted against its verdicts (None: no sidecar, or one unreadable);
    read from the index and the sidecar only, so the lists stay cheap."""
    if not sidecar_path(index.path).is_file():
        return None
    verdicts = {a.item_id or a.sid: a.accepted for a in index.sessions() if a.accepted is not None}
    try:
        return count_labels(read_sidecar(index.path), verdicts, verdict_set(index))
    except VoirdireError:
        return None


def runs_column(library: Any) -> dict[str, str]:
    """The runs list's labels column: run key → ``12 labelled · 83% agree · people differ on 2``."""
    out = {}
    for key, index in library.indexes():
        c = index_counts(index)
        if c is not None and c.by_item:
            text = f"{c.labelled} labelled · {share(c.agree, c.given)} agree"
            out[key] = text + (f" · people differ on {len(c.people_disagree)}" if c.people_disagree else "")
    return out


def session_labels(index: TranscriptIndex, choice: str) -> tuple[dict[str, str], Callable[[Attempt], bool] | None]:
    """The sessions list's labels column (item id → ``2 · agrees``) and the filter ``choice`` keeps (None: all)."""
    c = index_counts(index) or Counts()
    marks = {}
    for item, by in c.by_item.items():
        word = ("people differ" if item in c.people_disagree else "disagrees" if item in c.disagree_items
                else "agrees" if any(x.label is not None for x in by.values()) else "unsure")  # fmt: skip
        marks[item] = f"{len(by)} · {word}"
    tests: dict[str, Callable[[str], bool]] = {
        "labelled": lambda i: i in c.by_item,
        "not labelled": lambda i: i not in c.by_item,
        "disagrees": lambda i: i in c.disagree_items,
        "people disagree": lambda i: i in c.people_disagree,
    }
    test = tests.get(choice)
    return marks, (None if test is None else (lambda a: test(a.item_id or a.sid)))


def verdict_set(index: TranscriptIndex) -> dict[str, bool]:
    """Each decision of the run as the accept/reject it stood for, from the index's ledger (as ``Run.decisions``
    reads the transcript: a decision that stood for both is left out), so a session page reads no whole run."""
    return index.verdict_words()


def _items(index: TranscriptIndex) -> int:
    return len({a.item_id or a.sid for a in index.sessions() if a.accepted is not None})


def page(template: str, *, status_code: int = 200, **context: object) -> HTMLResponse:
    return HTMLResponse(render(template, **context), status_code=status_code)
