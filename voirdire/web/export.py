"""``voirdire export-html``: a transcript (or one session of it) as one self-contained static page.

The page holds its stylesheet inline and no script at all; its Content-Security-Policy (a ``<meta>`` element)
admits that one stylesheet by its hash and nothing else, so the file can be mailed or attached to an issue and
opened anywhere without running or fetching anything.
"""

from __future__ import annotations

import base64
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from voirdire.base import VoirdireError
from voirdire.chat import chat_of
from voirdire.reports import LeftOut, Prices, load_prices, run_cost
from voirdire.web.catalog import is_transcript, summarize
from voirdire.web.certificate import run_certificate
from voirdire.web.errors import ViewerError
from voirdire.web.index import TranscriptIndex
from voirdire.web.render import asset, inline_css, render, style_hash


def report_and_charts(index: TranscriptIndex, prices: Prices) -> tuple[str, list[tuple[str, str]], list[LeftOut]]:
    """The run's report as ``voirdire report`` prints it, its charts as ``data:`` SVG images (title, URI; none
    without matplotlib) and the charts left out with why, from one reading of the transcript."""
    from voirdire.analysis import PlotsUnavailable, render as draw, require, transcript_charts

    left: list[LeftOut] = []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                require()
            except PlotsUnavailable as exc:
                return _report_only(index, prices), [], [LeftOut("charts", str(exc))]
            report, charts = transcript_charts(index.path, prices=prices, left_out=left)
            uri = "data:image/svg+xml;base64,"
            drawn = [(c.title, uri + base64.b64encode(draw(c, "svg")).decode("ascii")) for c in charts]
            return report.text(), drawn, left
    except VoirdireError as exc:
        return f"no report: {exc}", [], left


def _report_only(index: TranscriptIndex, prices: Prices) -> str:
    from voirdire.registry import registrations
    from voirdire.reports import report_file

    header = index.header()
    reg = registrations().get(header.protocol) if header else None
    if reg is None:
        return f"protocol {header.protocol if header else '?'} is not installed: no report"
    return str(report_file(index.path, reg.fold, prices=prices)[0].text())


def export_html(index: TranscriptIndex, sessions: Sequence[str] | None = None, prices: Prices | None = None) -> str:
    """The page for ``sessions`` of the indexed transcript (all of them when None); costs priced by ``prices``."""
    prices = prices if prices is not None else load_prices()
    index.refresh()
    chosen = [a.sid for a in index.sessions()] if sessions is None else list(sessions)
    chats = []
    for sid in chosen:
        record = index.record(sid)
        if record is None:
            known = [a.sid for a in index.sessions()]
            listed = ", ".join(known[:10]) + (f" and {len(known) - 10} more" if len(known) > 10 else "")
            raise ViewerError(f"{index.path}: no session {sid!r} (sessions: {listed or 'none'})")
        chat = chat_of(record, index.header(record.run_id))
        chats.append((index.session(sid), chat, run_cost(chat.billed, prices)))
    csp = f"default-src 'none'; style-src {style_hash(asset('viewer.css'))}; img-src data:; base-uri 'none'"
    whole: dict[str, Any] = {"report": "", "charts": [], "left_out": [], "cert": None, "cert_charts": [], "links": {}}
    if sessions is None:  # a whole run opens as a report: its numbers, an index of sessions, the charts
        whole["report"], whole["charts"], whole["left_out"] = report_and_charts(index, prices)
        whole["cert"], whole["cert_charts"], _ = run_certificate(index, prices)
        whole["links"] = {sid: f"#s{n}" for n, sid in enumerate(chosen, 1)}
    return render(
        "export.html",
        run=summarize(index.path.name, index, prices),
        header=index.header(),
        chats=chats,
        css=inline_css(),
        csp=csp,
        **whole,
    )


def export_file(
    transcript: str | Path, out: str | Path, session: str | None = None, prices: Prices | None = None
) -> Path:
    """Write the page for ``transcript`` (or its ``session``) to ``out``; the index is kept in memory only."""
    path, target = Path(transcript), Path(out)
    if not path.is_file():
        raise ViewerError(f"{path}: no such transcript")
    if not is_transcript(path):
        raise ViewerError(f"{path}: not a voirdire transcript (its first line is not a run header)")
    if target.is_dir():
        raise ViewerError(f"{target}: is a folder; give the HTML file to write")
    index = TranscriptIndex(path, persist=False)
    index.refresh()
    if index.problems:  # a damaged line: an error, as ``show``, ``report`` and ``export`` make it, not a page
        more = f" (and {len(index.problems) - 1} more)" if len(index.problems) > 1 else ""
        raise ViewerError(f"{index.problems[0]}{more}")
    html = export_html(index, [session] if session else None, prices)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(html, encoding="utf-8")
    except OSError as exc:
        raise ViewerError(f"{target}: cannot write ({exc.strerror or exc})") from None
    return target
