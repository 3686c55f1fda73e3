"""``voirdire export-html``: a transcript (or one session of it) as one self-contained static page.

The page holds its stylesheet inline and no script at all; its Content-Security-Policy (a ``<meta>`` element)
admits that one stylesheet by its hash and nothing else, so the file can be mailed or attached to an issue and
opened anywhere without running or fetching anything.
"""

from __future__ import annotations

import base64
import contextlib
import tempfile
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from voirdire.base import VoirdireError
from voirdire.certificate import CertificateReading
from voirdire.chat import chat_of, gold_values
from voirdire.reports import LeftOut, Prices, Report, ReportFold, load_prices, run_cost
from voirdire.transcript import SessionStart
from voirdire.web.attempt import Attempt
from voirdire.web.catalog import is_transcript, summarize
from voirdire.web.certificate import certified, run_certificate
from voirdire.web.errors import ViewerError
from voirdire.web.index import TranscriptIndex
from voirdire.web.render import asset, environment, inline_css, style_hash
from voirdire.web.spans import read_line


def report_and_charts(
    index: TranscriptIndex, prices: Prices, alongside: Sequence[ReportFold[Any, Any]] = ()
) -> tuple[Report | None, str, list[tuple[str, str]], list[LeftOut]]:
    """The run's report and its text as ``voirdire report`` prints it, its charts as ``data:`` SVG images (title,
    URI; none without matplotlib) and the charts left out with why, from one reading of the transcript that folds
    ``alongside`` too. No report (None) where the protocol is not installed or the file cannot be reported on."""
    from voirdire.analysis import PlotsUnavailable, render as draw, require, transcript_charts

    left: list[LeftOut] = []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                require()
            except PlotsUnavailable as exc:
                report, text = _report_only(index, prices, alongside)
                return report, text, [], [LeftOut("charts", str(exc))]
            report, charts = transcript_charts(index.path, prices=prices, left_out=left, alongside=alongside)
            uri = "data:image/svg+xml;base64,"
            drawn = [(c.title, uri + base64.b64encode(draw(c, "svg")).decode("ascii")) for c in charts]
            return report, report.text(), drawn, left
    except VoirdireError as exc:
        return None, f"no report: {exc}", [], left


def _report_only(
    index: TranscriptIndex, prices: Prices, alongside: Sequence[ReportFold[Any, Any]]
) -> tuple[Report | None, str]:
    from voirdire.registry import registrations
    from voirdire.reports import report_file

    header = index.header()
    reg = registrations().get(header.protocol) if header else None
    if reg is None:
        return None, f"protocol {header.protocol if header else '?'} is not installed: no report"
    report = report_file(index.path, reg.fold, prices=prices, alongside=alongside)[0]
    return report, str(report.text())


PAGE_SESSIONS = 1000
"""The sessions one page holds: a longer run is split, so that every page stays one a browser opens (about 10 MB
of LMvLM sessions). The first page holds the report, the charts, the certificate and the list of every session."""


@dataclass(frozen=True)
class ExportPlan:
    """What ``export-html`` writes: how many sessions, the pages that hold them, and the sessions asked for by id
    (None: the run's own, in its order, read from the index a page at a time, never all at once)."""

    count: int
    pages: list[Path]
    chosen: list[Attempt] | None = None
    per_page: int = PAGE_SESSIONS

    @property
    def single(self) -> bool:
        """One session asked for by id: its page has no report."""
        return self.chosen is not None and len(self.chosen) == 1

    def held(self, index: TranscriptIndex, page: int) -> list[Attempt]:
        """The sessions of page ``page`` (0-based)."""
        start = page * self.per_page
        size = max(0, min(self.per_page, self.count - start))
        if self.chosen is not None:
            return self.chosen[start : start + size]
        return index.page(limit=size, offset=start) if size else []

    def every(self, index: TranscriptIndex) -> Iterator[Attempt]:
        """Every session, in order, a page at a time."""
        for page in range(len(self.pages)):
            yield from self.held(index, page)

    def page_of(self, n: int) -> int:
        """The page (0-based) holding session number ``n`` (1-based)."""
        return (n - 1) // self.per_page

    def href(self, n: int, page: int) -> str:
        """The link to session ``n`` from page ``page``."""
        held = self.page_of(n)
        return f"#s{n}" if held == page else f"{self.pages[held].name}#s{n}"

    def describe(self) -> str:
        """One line: how many sessions go to which files."""
        count = f"{self.count:,} session{'s' * (self.count != 1)}"
        if len(self.pages) == 1:
            return f"{count} to {self.pages[0]}"
        rest = f"{self.pages[1].name} … {self.pages[-1].name}" if len(self.pages) > 2 else self.pages[1].name
        return (
            f"{count} to {self.pages[0]} (the report and the list of sessions, then sessions 1–{self.per_page:,}) "
            f"and {len(self.pages) - 1} more page{'s' * (len(self.pages) > 2)} of up to {self.per_page:,} ({rest})"
        )


def plan_export(
    index: TranscriptIndex, out: Path, sessions: Sequence[str] | None = None, limit: int | None = None
) -> ExportPlan:
    """The sessions ``sessions`` names (all, in the run's order, when None), the first ``limit`` of them, and the
    pages they need: ``out``, then ``out``'s stem with ``-2``, ``-3``, … for every further ``PAGE_SESSIONS``."""
    index.refresh()
    chosen: list[Attempt] | None = None
    if sessions is not None:
        chosen = []
        for sid in sessions:
            attempt = index.session(sid)
            if attempt is None:
                known = [a.sid for a in index.page(limit=11)]
                listed = ", ".join(known[:10]) + (f" and {index.count() - 10} more" if len(known) > 10 else "")
                raise ViewerError(f"{index.path}: no session {sid!r} (sessions: {listed or 'none'})")
            chosen.append(attempt)
    total = len(chosen) if chosen is not None else index.count()
    total = min(total, limit) if limit is not None else total
    per_page = PAGE_SESSIONS
    pages = [out, *(out.with_name(f"{out.stem}-{k}{out.suffix}") for k in range(2, -(-total // per_page) + 1))]
    return ExportPlan(total, pages, chosen, per_page)


def page_parts(
    index: TranscriptIndex, plan: ExportPlan, page: int, prices: Prices, whole: dict[str, Any] | None = None
) -> Iterator[str]:
    """Page ``page`` (0-based) of ``plan``, as the template renders it, piece by piece: each session's chat is
    made when its turn comes and dropped after, so a page of any length is written in the memory of one session.
    ``whole``: the first page's report, charts and certificate (``run_parts``)."""
    first = page * plan.per_page + 1
    held = plan.held(index, page)

    def chats() -> Iterator[tuple[int, Attempt, Any, Any]]:
        for n, attempt in enumerate(held, first):
            record = index.record(attempt.sid)
            if record is None:  # the index names it: only a file changed under the export loses it
                raise ViewerError(f"{index.path}: session {attempt.sid!r} is no longer in the file")
            chat = chat_of(record, index.header(record.run_id))
            yield n, attempt, chat, run_cost(chat.billed, prices)

    csp = f"default-src 'none'; style-src {style_hash(asset('viewer.css'))}; img-src data:; base-uri 'none'"
    parts = whole if whole is not None and page == 0 else _NO_REPORT
    links = {a.sid: plan.href(n, page) for n, a in enumerate(plan.every(index), 1)} if parts is whole else {}
    template = environment().get_template("export.html")
    yield from template.generate(
        run=summarize(index.path.name, index, prices),
        header=index.header(),
        chats=chats(),
        toc=_contents(index, plan) if page == 0 else iter(()),
        links=links,
        count=plan.count,
        single=held[0].sid if plan.single and held else "",
        first=first,
        last=first + len(held) - 1,
        page_no=page + 1,
        pages=len(plan.pages),
        home=plan.pages[0].name,
        css=inline_css(),
        csp=csp,
        **parts,
    )


def _contents(index: TranscriptIndex, plan: ExportPlan) -> Iterator[tuple[Attempt, str, list[str]]]:
    """The first page's list of sessions, one row at a time: the attempt, the link to its chat, and its item's gold
    values (read from its ``session_start`` line alone)."""
    header = index.header()
    hints = header.display if header is not None else None
    for n, a in enumerate(plan.every(index), 1):
        gold: list[str] = []
        line = read_line(index.path, a.start) if a.start and hints is not None and hints.gold_fields else None
        if line is not None and hints is not None:
            with contextlib.suppress(ValueError):
                gold = gold_values(SessionStart.model_validate_json(line).item, hints)
        yield a, plan.href(n, 0), gold


_NO_REPORT: dict[str, Any] = {"report": "", "charts": [], "left_out": [], "cert": None, "cert_charts": []}


def run_parts(index: TranscriptIndex, prices: Prices) -> dict[str, Any]:
    """A whole run's first page: its report, its charts and the charts left out, and its certificate, read in one
    pass over the file (the certificate's folds made alongside the report's)."""
    reading = CertificateReading(index.path)
    report, text, charts, left_out = report_and_charts(index, prices, alongside=reading.folds())
    if report is None:  # no pass folded the certificate's reading: it makes its own
        cert, cert_charts, _ = run_certificate(index, prices)
    else:
        cert, cert_charts, _ = certified(reading, report)
    return {"report": text, "charts": charts, "left_out": left_out, "cert": cert, "cert_charts": cert_charts}


def export_html(index: TranscriptIndex, sessions: Sequence[str] | None = None, prices: Prices | None = None) -> str:
    """The page for ``sessions`` of the indexed transcript (all of them when None) as one string, for the viewer's
    download (which refuses a run too long for one page); costs priced by ``prices``."""
    prices = prices if prices is not None else load_prices()
    plan = plan_export(index, Path(index.path.name).with_suffix(".html"), sessions)
    one = ExportPlan(plan.count, plan.pages[:1], plan.chosen, per_page=max(1, plan.count))
    whole = run_parts(index, prices) if sessions is None else None
    return "".join(page_parts(index, one, 0, prices, whole))


def export_file(
    transcript: str | Path,
    out: str | Path,
    session: str | Sequence[str] | None = None,
    prices: Prices | None = None,
    *,
    limit: int | None = None,
    said: Callable[[str], None] | None = None,
) -> Path:
    """Write the pages for ``transcript`` (or the sessions ``session`` names; the first ``limit``) to ``out``
    and, for a run longer than a page, the pages beside it; each page is written as it is rendered, one session at
    a time. The index is kept in a temporary file, removed after. ``said`` is told what will be written before
    anything is."""
    path, target = Path(transcript), Path(out)
    if not path.is_file():
        raise ViewerError(f"{path}: no such transcript")
    if not is_transcript(path):
        raise ViewerError(f"{path}: not a voirdire transcript (its first line is not a run header)")
    if target.is_dir():
        raise ViewerError(f"{target}: is a folder; give the HTML file to write")
    prices = prices if prices is not None else load_prices()
    # The index in a temporary file, not in memory: what a long run's ledger holds stays on disk.
    with tempfile.TemporaryDirectory(prefix="voirdire-export-") as folder:
        index = TranscriptIndex(path, store=Path(folder) / "index", persist=True)
        index.refresh()
        if index.problems:  # a damaged line: an error, as ``show``, ``report`` and ``export`` make it, not a page
            more = f" (and {len(index.problems) - 1} more)" if len(index.problems) > 1 else ""
            raise ViewerError(f"{index.problems[0]}{more}")
        chosen = [session] if isinstance(session, str) else (list(session) if session else None)
        plan = plan_export(index, target, chosen, limit)
        if said is not None:
            said(f"writing {plan.describe()}")
        whole = run_parts(index, prices) if chosen is None else None
        for page, written in enumerate(plan.pages):
            _write(written, page_parts(index, plan, page, prices, whole))
    return target


def _write(target: Path, parts: Iterator[str]) -> None:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("w", encoding="utf-8") as fh:
            for part in parts:
                fh.write(part)
    except OSError as exc:
        raise ViewerError(f"{target}: cannot write ({exc.strerror or exc})") from None
