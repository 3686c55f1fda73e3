"""The viewer's certificate page of a run (``/run/<file>/certificate``) and the certificate section of a whole-run
``export-html`` page: ``voirdire.certificate.certificate_of`` of the transcript, as ``voirdire report`` prints it
in its certificate section, with its charts (confusion matrix, intervals, reliability diagram, stability) drawn by
``voirdire.analysis`` and embedded as ``data:`` SVG images (the page's Content-Security-Policy admits those, and
no script). Computed once per transcript size: a page reloaded while nothing was written computes nothing again.
"""

from __future__ import annotations

import base64
import threading
import warnings
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import BaseRoute, Route

from voirdire.base import VoirdireError
from voirdire.certificate import Certificate, CertificateReading, gold_of_rows
from voirdire.web.render import render

if TYPE_CHECKING:
    from voirdire.reports import Report
    from voirdire.web.index import TranscriptIndex


class Pages(Protocol):
    """What this page uses of the viewer's ``voirdire.web.app.Pages`` (not imported: the app imports this)."""

    prices: Any

    def run_index(self, request: Request) -> tuple[str, TranscriptIndex]: ...


LISTED = 200  # the disagreements a page's certificate section lists; the rest are counted there

_lock = threading.Lock()
_made: dict[tuple[str, int], tuple[Certificate | None, list[tuple[str, str]], str | None]] = {}
_CACHE_SIZE = 16


def run_certificate(
    index: TranscriptIndex, prices: Any
) -> tuple[Certificate | None, list[tuple[str, str]], str | None]:
    """The run's certificate, its charts as (title, data URI), and why there is no certificate or no chart."""
    key = (str(index.path), index.size)
    with _lock:
        if key in _made:
            return _made[key]
    made = _make(index, prices)
    with _lock:
        if len(_made) >= _CACHE_SIZE:
            _made.pop(next(iter(_made)))
        _made[key] = made
    return made


def _make(index: TranscriptIndex, prices: Any) -> tuple[Certificate | None, list[tuple[str, str]], str | None]:
    """The certificate of the run and its protocol's report, read in one pass over the file."""
    from voirdire.registry import registrations
    from voirdire.reports import report_file

    header = index.header()
    reg = registrations().get(header.protocol) if header else None
    try:
        reading = CertificateReading(index.path)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if reg is None:  # no report to fold beside: the reading makes its own pass
                reading.read()
                report = None
            else:
                report = report_file(index.path, reg.fold, prices=prices, alongside=reading.folds())[0]
    except VoirdireError as exc:
        return None, [], f"no certificate: {exc}"
    return certified(reading, report)


def certified(
    reading: CertificateReading, report: Report | None
) -> tuple[Certificate | None, list[tuple[str, str]], str | None]:
    """The certificate of a pass that folded ``reading`` (alongside ``report``, the protocol's report, where there is
    one), its charts as (title, data URI), and why there is no certificate or no chart."""
    from voirdire.analysis import PlotsUnavailable, render as draw, require

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            gold_rows = gold_of_rows(report) if report is not None else None
            cert = reading.certificate(report, gold_rows=gold_rows, listed=LISTED)
    except VoirdireError as exc:
        return None, [], f"no certificate: {exc}"
    try:
        require()
    except PlotsUnavailable as exc:
        return cert, [], str(exc)
    uri = "data:image/svg+xml;base64,"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        charts = [(c.title, uri + base64.b64encode(draw(c, "svg")).decode("ascii")) for c in cert.charts()]
    return cert, charts, None


def certificate_page(pages: Pages, request: Request) -> HTMLResponse:
    key, index = pages.run_index(request)
    cert, charts, problem = run_certificate(index, pages.prices)
    links = {a.sid: f"/run/{quote(key, safe='')}/session/{quote(a.sid, safe='')}" for a in index.sessions()}
    return HTMLResponse(render(
        "certificate.html", key=key, header=index.header(), cert=cert, cert_charts=charts, problem=problem,
        links=links, version=str(index.size),
    ))  # fmt: skip


def routes(pages: Pages) -> list[BaseRoute]:
    return [Route("/run/{key}/certificate", lambda request: certificate_page(pages, request))]
