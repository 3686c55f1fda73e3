"""The viewer as a Starlette application: runs, sessions of a run, one session as a chat, a run's report.

Every page is rendered on the server from the transcript index (``voirdire.web.index``), so a page reads only the
sessions it shows. Pages that can change (a run in progress) carry the URL of a version probe; the viewer's script
polls it and swaps in the page's new content when the transcript grows. Every response carries a
Content-Security-Policy that allows no inline script, and only requests addressed to 127.0.0.1 or localhost are
answered (a page elsewhere cannot reach the viewer through a rebound DNS name).
"""

from __future__ import annotations

import warnings
from importlib import resources
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from voirdire.base import VoirdireError
from voirdire.chat import chat_of
from voirdire.reports import Prices, load_prices, run_cost
from voirdire.web import across, certificate, compare, review, search
from voirdire.web.catalog import Library, RunSummary
from voirdire.web.errors import ViewerError
from voirdire.web.export import export_html
from voirdire.web.index import TranscriptIndex
from voirdire.web.query import CHOICES, Query, select
from voirdire.web.render import SERVER_CSP, render

ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
EXPORT_LIMIT = 1000  # sessions one downloaded page may hold
SECURITY_HEADERS = {
    "content-security-policy": SERVER_CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}


class SecurityHeaders:
    """Adds the security headers to every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.decode().lower() not in SECURITY_HEADERS]
                headers += [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, sending)


class Pages:
    """The viewer's page handlers over one library and one price table. A new page is a method here (or a function
    of its own module taking ``Pages``) plus one ``Route`` in ``routes``."""

    def __init__(self, library: Library, prices: Prices) -> None:
        self.library = library
        self.prices = prices

    def run_index(self, request: Request) -> tuple[str, TranscriptIndex]:
        key = request.path_params["key"]
        index = self.library.get(key)
        if index is None:
            raise HTTPException(404, f"no transcript {key!r} here")
        try:
            index.refresh()
        except ViewerError as exc:
            raise HTTPException(404, str(exc)) from None
        return key, index

    def runs_version(self) -> tuple[list[RunSummary], str]:
        summaries = self.library.summaries(self.prices)
        return summaries, ";".join(f"{s.key}:{s.sessions}:{s.finished}:{s.errors}" for s in summaries)

    def runs(self, request: Request) -> HTMLResponse:
        summaries, version = self.runs_version()
        sources = [*self.library.folders, *self.library.files]
        labels = review.runs_column(self.library)  # people's labels, where a run has any
        return page("runs.html", runs=summaries, sources=sources, version=version, labels=labels)

    def sessions(self, request: Request) -> HTMLResponse:
        key, index = self.run_index(request)
        query = Query.from_params(request.query_params)
        labels, keep = review.session_labels(index, query.labels)  # people's labels: a column and a filter
        return page(
            "sessions.html",
            key=key,
            index=index,
            header=index.header(),
            query=query,
            found=select(index, query, keep),
            labels=labels,
            choices=CHOICES,
            version=str(index.size),
            live=live(index),
        )

    def session(self, request: Request) -> HTMLResponse:
        key, index = self.run_index(request)
        sid = request.path_params["sid"]
        attempt = index.session(sid)
        try:
            record = index.record(sid)
        except ViewerError as exc:  # a damaged line inside this session
            raise HTTPException(500, str(exc)) from None
        if attempt is None or record is None:
            raise HTTPException(404, f"{key}: no session {sid!r}")
        chat = chat_of(record, index.header(record.run_id))
        previous, following = index.neighbours(sid)  # from the index's cached order: no pass over the run
        return page(
            "session.html",
            key=key,
            chat=chat,
            attempt=attempt,
            cost=run_cost(chat.billed, self.prices),
            prompts=request.query_params.get("prompts") == "1",
            previous=previous,
            next=following,
            version=f"{attempt.events}:{attempt.end}",
            live=live(index) and attempt.status == "running",
            review=review.panel(self, key, index, attempt),  # the labelling controls (voirdire.web.review)
        )

    def report(self, request: Request) -> HTMLResponse:
        key, index = self.run_index(request)
        header = index.header()
        text, problem = "", None
        try:
            from voirdire.registry import registrations
            from voirdire.reports import report_file

            reg = registrations().get(header.protocol) if header else None
            if reg is None:
                problem = f"protocol {header.protocol if header else '?'} is not installed: no report"
            else:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    text = report_file(index.path, reg.fold, prices=self.prices)[0].text()
        except Exception as exc:  # a report that fails is shown as such, not as a server error
            problem = f"{type(exc).__name__}: {exc}"
        return page("report.html", key=key, header=header, text=text, problem=problem, version=str(index.size))

    def export(self, request: Request) -> Response:
        key, index = self.run_index(request)
        sid = request.query_params.get("session") or None
        if sid is not None and index.session(sid) is None:
            raise HTTPException(404, f"{key}: no session {sid!r}")
        if sid is None and index.count() > EXPORT_LIMIT:
            raise HTTPException(
                413,
                f"{key}: {index.count()} sessions are too many for one page; download a session from its page, "
                f"or run: voirdire export-html {index.path} -o FILE.html",
            )
        html = export_html(index, sessions=[sid] if sid else None, prices=self.prices)
        name = (key.rsplit(".", 1)[0] + (f"-{sid}" if sid else "")).replace('"', "")
        disposition = f"attachment; filename*=UTF-8''{quote(name)}.html"
        return HTMLResponse(html, headers={"content-disposition": disposition})

    def version(self, request: Request) -> JSONResponse:
        """What a live page polls: a token that changes when what the page shows may have changed."""
        if request.query_params.get("page", "runs") == "runs":
            return JSONResponse({"version": self.runs_version()[1]})
        index = self.library.get(request.query_params.get("key", ""))
        if index is None:
            return JSONResponse({"version": "gone"}, status_code=404)
        try:
            index.refresh()
        except ViewerError:  # moved, deleted or unreadable since the page was served: the page says so on reload
            return JSONResponse({"version": "gone"}, status_code=404)
        sid = request.query_params.get("session")
        if sid:
            a = index.session(sid)
            return JSONResponse({"version": f"{a.events}:{a.end}" if a else "none"})
        return JSONResponse({"version": str(index.size)})


def routes(pages: Pages) -> list[BaseRoute]:
    """Every page's address. Add a page's ``Route`` here, before the session route (its ``sid`` takes the rest)."""
    static = StaticFiles(directory=str(resources.files("voirdire.web").joinpath("static")))
    return [
        Route("/", pages.runs),
        Route("/api/version", pages.version),
        Route("/run/{key}", pages.sessions),
        Route("/run/{key}/report", pages.report),
        Route("/run/{key}/export", pages.export),
        *compare.routes(pages),  # a run's charts, comparing runs
        *certificate.routes(pages),  # a run's certificate (voirdire.web.certificate)
        *review.routes(pages),  # the labelling queue and the one POST that writes (labels beside a transcript)
        *search.routes(pages),  # search across runs (voirdire.web.search)
        *across.routes(pages),  # one item's sessions in every run (voirdire.web.across)
        Route("/run/{key}/session/{sid:path}", pages.session),
        Mount("/static", static, name="static"),
    ]


async def error_page(request: Request, exc: Exception) -> Response:
    status = getattr(exc, "status_code", 500)
    detail = getattr(exc, "detail", "error")
    return page("error.html", status_code=status, status=status, detail=detail, version="")


async def internal_error(request: Request, exc: Exception) -> Response:
    """A bug's page: no internals shown, and the security headers set here, since Starlette answers an unhandled
    exception outside every middleware (``SecurityHeaders`` included). A ``VoirdireError`` that a page did not
    catch is what is wrong with a file on disk, in the words meant for the user: its page says that (422)."""
    if isinstance(exc, VoirdireError):
        response = page("error.html", status_code=422, status=422, detail=str(exc), version="")
        response.headers.update(SECURITY_HEADERS)
        return response
    response = page("error.html", status_code=500, status=500, detail="internal error", version="")
    response.headers.update(SECURITY_HEADERS)
    return response


def create_app(library: Library, *, prices: Prices | None = None) -> Starlette:
    """The viewer over ``library``; costs priced by ``prices`` (default: ``voirdire.reports.prices.load_prices()``)."""
    pages = Pages(library, prices if prices is not None else load_prices())
    return Starlette(
        routes=routes(pages),
        middleware=[
            Middleware(SecurityHeaders),
            Middleware(TrustedHostMiddleware, allowed_hosts=ALLOWED_HOSTS),
        ],
        exception_handlers={HTTPException: error_page, Exception: internal_error},
    )


def live(index: TranscriptIndex) -> bool:
    """A run is writing this transcript (the runner holds its lock file)."""
    return index.path.with_name(index.path.name + ".lock").exists()


def page(template: str, *, status_code: int = 200, **context: object) -> HTMLResponse:
    return HTMLResponse(render(template, **context), status_code=status_code)
