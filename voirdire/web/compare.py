"""The viewer's charts and run comparison: a run's charts as server-drawn SVG images, and the comparison page of two
or more runs over the same items (verdicts item by item, agreement and Cohen's κ, gold agreement per run, a
"disagree" filter, both sessions of an item side by side).

The images are drawn here with matplotlib (``voirdire.analysis.drawing``) and served from the viewer's own origin as
``image/svg+xml``: the page needs no script for them and the Content-Security-Policy stays as strict (an SVG shown
through ``<img>`` runs nothing). The numbers are those of ``voirdire report --plot`` and ``voirdire compare``: the
same functions compute them. Drawn charts are kept per transcript size, so a page reloaded while nothing was
written draws nothing again.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Route

from voirdire.analysis import CompareError, Comparison, RunOverviews, compare, compare_runs, comparison_charts
from voirdire.base import VoirdireError
from voirdire.chat import chat_of
from voirdire.reports import Chart, Overview, run_cost, slug
from voirdire.web.errors import ViewerError
from voirdire.web.render import render

if TYPE_CHECKING:
    from voirdire.web.catalog import Library
    from voirdire.web.index import TranscriptIndex


class Pages(Protocol):
    """What these pages use of the viewer's ``voirdire.web.app.Pages`` (not imported: the app imports this)."""

    library: Library
    prices: Any

    def run_index(self, request: Request) -> tuple[str, TranscriptIndex]: ...


SVG_TYPE = "image/svg+xml"
_CACHE_SIZE = 64
_lock = threading.Lock()
_charts: dict[tuple[str, int], tuple[list[Chart], str | None]] = {}
_drawn: dict[tuple[Any, ...], bytes] = {}
_comparisons: dict[tuple[Any, ...], Comparison] = {}
_left_out: dict[tuple[str, int], list[Any]] = {}


def _remember(store: dict[Any, Any], key: Any, value: Any) -> Any:
    with _lock:
        if len(store) >= _CACHE_SIZE:
            store.pop(next(iter(store)))
        store[key] = value
    return value


def run_charts(index: TranscriptIndex, prices: Any) -> tuple[list[Chart], str | None]:
    """The charts of a transcript (as ``voirdire report --plot`` draws them) and why there are none, if so."""
    from voirdire.analysis import PlotsUnavailable, require, transcript_charts

    key = (str(index.path), index.size)
    if key in _charts:
        return _charts[key]
    try:
        require()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            left: list[Any] = []
            _, charts = transcript_charts(index.path, prices=prices, left_out=left)
            _remember(_left_out, key, left)  # the charts not drawn, with why (shown on the charts page)
        found: tuple[list[Chart], str | None] = (charts, None)
    except PlotsUnavailable as exc:
        found = ([], str(exc))
    except VoirdireError as exc:
        found = ([], f"no charts: {exc}")
    return _remember(_charts, key, found)  # type: ignore[no-any-return]


def svg(chart: Chart, key: tuple[Any, ...]) -> Response:
    from voirdire.analysis import render as draw

    data = _drawn.get(key)
    if data is None:
        data = _remember(_drawn, key, draw(chart, "svg"))
    return Response(data, media_type=SVG_TYPE)


def page(template: str, **context: Any) -> HTMLResponse:
    return HTMLResponse(render(template, **context))


# ----------------------------------------------------------------------------------------- a run's charts


def charts_page(pages: Pages, request: Request) -> HTMLResponse:
    key, index = pages.run_index(request)
    charts, problem = run_charts(index, pages.prices)
    shown = [(slug(c.name), c.title, c.caption) for c in charts]
    left_out = _left_out.get((str(index.path), index.size), [])
    return page(
        "charts.html", key=key, header=index.header(), charts=shown, problem=problem, left_out=left_out,
        version=str(index.size),
    )  # fmt: skip


def chart_image(pages: Pages, request: Request) -> Response:
    key, index = pages.run_index(request)
    name = request.path_params["name"]
    charts, problem = run_charts(index, pages.prices)
    chart = next((c for c in charts if slug(c.name) == name), None)
    if chart is None:
        raise HTTPException(404, problem or f"{key}: no chart {name!r}")
    return svg(chart, (str(index.path), index.size, name))


# ----------------------------------------------------------------------------------------- comparing runs


def _chosen(pages: Pages, request: Request) -> list[tuple[str, TranscriptIndex]]:
    keys = list(dict.fromkeys(request.query_params.getlist("run")))
    chosen = []
    for key in keys:
        index = pages.library.get(key)
        if index is None:
            raise HTTPException(404, f"no transcript {key!r} here")
        try:
            index.refresh()
        except ViewerError as exc:  # gone, or a header this voirdire cannot read: said, as a run's page says it
            raise HTTPException(404, str(exc)) from None
        chosen.append((key, index))
    return chosen


def _by(request: Request) -> str:
    by = request.query_params.get("by", "decision")
    if by not in ("decision", "accepted"):
        raise HTTPException(400, f"by={by!r}: decision or accepted")
    return by


def comparison(chosen: Sequence[tuple[str, TranscriptIndex]], by: str) -> Comparison:
    key = (tuple((k, i.size) for k, i in chosen), by)
    if key in _comparisons:
        return _comparisons[key]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            try:
                c = compare([i.path for _, i in chosen], by=by, labels=[k for k, _ in chosen])  # type: ignore[arg-type]
            except CompareError:
                raise
            except VoirdireError:  # a line the reports cannot read: compare what the indexes could read
                c = compare_runs([_indexed(k, i) for k, i in chosen], by=by)  # type: ignore[arg-type]
        except CompareError as exc:
            raise HTTPException(400, str(exc)) from None
    return _remember(_comparisons, key, c)  # type: ignore[no-any-return]


def _indexed(key: str, index: TranscriptIndex) -> RunOverviews:
    """A run as its index reads it: the attempt that counts of each session, its verdict and gold correctness;
    lines it cannot read are left out (and listed among the run's problems)."""
    try:
        header = index.header()
    except VoirdireError:
        header = None
    sessions = index.sessions()
    values = [Overview(a.item_id, a.decision, a.accepted, a.correct, ()) for a in sessions]
    return RunOverviews(key, str(index.path), header.protocol if header else "?", len(sessions), values)


def compare_page(pages: Pages, request: Request) -> HTMLResponse:
    chosen = _chosen(pages, request)
    by = _by(request)
    summaries = pages.library.summaries(pages.prices)
    if len(chosen) < 2:
        return page("compare.html", runs=summaries, chosen=[k for k, _ in chosen], c=None, by=by, version="")
    c = comparison(chosen, by)
    only = request.query_params.get("only", "")
    rows = [r for r in c.rows if r.agree is False] if only == "disagree" else c.rows
    sids = [{a.item_id: a.sid for a in index.sessions()} for _, index in chosen]
    query = [("run", k) for k, _ in chosen] + [("by", by)]
    return page(
        "compare.html",
        runs=summaries,
        chosen=[k for k, _ in chosen],
        c=c,
        rows=rows[:500],
        hidden=max(0, len(rows) - 500),
        only=only,
        by=by,
        sids=sids,
        query=query,
        charts=[(slug(ch.name), ch.title) for ch in comparison_charts(c)],
        version=";".join(f"{k}:{i.size}" for k, i in chosen),
    )


def compare_image(pages: Pages, request: Request) -> Response:
    chosen = _chosen(pages, request)
    if len(chosen) < 2:
        raise HTTPException(400, "compare: choose two or more runs (run=KEY&run=KEY)")
    by = _by(request)
    c = comparison(chosen, by)
    name = request.path_params["name"]
    chart = next((ch for ch in comparison_charts(c) if slug(ch.name) == name), None)
    if chart is None:
        raise HTTPException(404, f"no comparison chart {name!r}")
    from voirdire.analysis import PlotsUnavailable

    try:
        return svg(chart, (tuple((k, i.size) for k, i in chosen), by, name))
    except PlotsUnavailable as exc:
        raise HTTPException(404, str(exc)) from None


def compare_item(pages: Pages, request: Request) -> HTMLResponse:
    """One item's sessions in every chosen run, side by side."""
    chosen = _chosen(pages, request)
    item = request.query_params.get("item", "")
    sides = []
    for key, index in chosen:
        attempt = next((a for a in index.sessions() if a.item_id == item), None)
        record = index.record(attempt.sid) if attempt is not None else None
        if attempt is None or record is None:
            sides.append((key, None, None, None))
            continue
        chat = chat_of(record, index.header(record.run_id))
        sides.append((key, chat, attempt, run_cost(chat.billed, pages.prices)))
    if not any(chat for _, chat, _, _ in sides):
        raise HTTPException(404, f"no session of item {item!r} in the chosen runs")
    back = [("run", k) for k, _ in chosen] + [("by", request.query_params.get("by", "decision"))]
    paths = {key: str(index.path) for key, index in chosen}  # each run's folder beside its name
    return page("compare_item.html", item=item, sides=sides, back=back, paths=paths, version="")


def routes(pages: Pages) -> list[BaseRoute]:
    """The charts and comparison pages' addresses (placed before the session route, whose ``sid`` takes the rest)."""
    return [
        Route("/run/{key}/charts", lambda r: charts_page(pages, r)),
        Route("/run/{key}/chart/{name}.svg", lambda r: chart_image(pages, r)),
        Route("/compare", lambda r: compare_page(pages, r)),
        Route("/compare/item", lambda r: compare_item(pages, r)),
        Route("/compare/chart/{name}.svg", lambda r: compare_image(pages, r)),
    ]
