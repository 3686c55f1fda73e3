"""The browser's commands: ``view`` (a local web app over transcripts) and ``export-html`` (one page)."""

from __future__ import annotations

import argparse
import sys
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from voirdire.base import shown
from voirdire.cli.options import add_prices_option, at_least

if TYPE_CHECKING:
    pass


def register(sub: Any) -> None:
    """``view`` and ``export-html`` in the sub-command table ``sub``."""
    vw = sub.add_parser("view", help="browse transcripts as chats in a local web app on 127.0.0.1")
    vw.add_argument("sources", nargs="*", metavar="DIR|TRANSCRIPT", help="folders, transcripts (default transcripts/)")
    vw.add_argument("--port", type=int, default=7788, help="port on 127.0.0.1 (default 7788; 0 picks a free one)")
    add_prices_option(vw)
    vw.set_defaults(func=cmd_view)

    ex = sub.add_parser(
        "export-html",
        help="a transcript (or some of its sessions) as self-contained HTML pages, 1,000 sessions a page",
    )
    ex.add_argument("transcript", type=Path)
    ex.add_argument("--session", action="append", metavar="ID", help="only this session id (repeatable)")
    ex.add_argument("--limit", type=at_least(1), metavar="N", help="only the first N sessions")
    ex.add_argument(
        "-o", "--out", type=Path, required=True, metavar="FILE.html",
        help="the page to write; a run of more than 1,000 sessions also gets FILE-2.html, FILE-3.html, ...",
    )  # fmt: skip
    add_prices_option(ex)
    ex.set_defaults(func=cmd_export_html)


def cmd_view(args: argparse.Namespace) -> int:
    from voirdire.reports import load_prices
    from voirdire.web import Viewer

    viewer = Viewer(args.sources or ["transcripts"], port=args.port, prices=load_prices(args.prices))
    print(f"voirdire view: {viewer.url}  (Ctrl-C stops it)", flush=True)
    with suppress(KeyboardInterrupt):  # Ctrl-C is how the viewer is meant to stop
        viewer.serve()
    return 0


def cmd_export_html(args: argparse.Namespace) -> int:
    from voirdire.chat import stage  # rich: imported by this command, not by `voirdire --help`
    from voirdire.reports import load_prices
    from voirdire.web import export_file

    prices = load_prices(args.prices)
    with stage(f"writing {args.out}"):
        page = export_file(
            args.transcript, args.out, session=args.session, prices=prices, limit=getattr(args, "limit", None),
            said=lambda line: print(shown(line), file=sys.stderr, flush=True),
        )  # fmt: skip
    print(shown(page))
    return 0
