"""The browser's commands: ``view`` (a local web app over transcripts) and ``export-html`` (one page)."""

from __future__ import annotations

import argparse
from contextlib import suppress
from pathlib import Path
from typing import Any

from voirdire.cli.options import CLIError


def register(sub: Any) -> None:
    """``view`` and ``export-html`` in the sub-command table ``sub``."""
    vw = sub.add_parser("view", help="browse transcripts as chats in a local web app on 127.0.0.1")
    vw.add_argument("sources", nargs="*", metavar="DIR|TRANSCRIPT", help="folders, transcripts (default transcripts/)")
    vw.add_argument("--port", type=int, default=7788, help="port on 127.0.0.1 (default 7788; 0 picks a free one)")
    vw.add_argument(
        "--price", action="append", default=[], metavar="MODEL=IN,OUT",
        help="USD per million prompt,completion tokens of a model as transcripts name it, for run costs (repeatable)",
    )  # fmt: skip
    vw.set_defaults(func=cmd_view)

    ex = sub.add_parser("export-html", help="a transcript (or one session) as one self-contained HTML page")
    ex.add_argument("transcript", type=Path)
    ex.add_argument("--session", help="only this session id")
    ex.add_argument("-o", "--out", type=Path, required=True, metavar="FILE.html", help="the page to write")
    ex.set_defaults(func=cmd_export_html)


def parse_price(text: str) -> tuple[str, tuple[float, float]]:
    """``MODEL=IN,OUT`` (USD per million prompt and completion tokens)."""
    model, sep, rest = text.rpartition("=")
    try:
        prompt, completion = (float(x) for x in rest.split(","))
    except ValueError:
        prompt = completion = -1.0
    if not sep or not model or prompt < 0 or completion < 0:
        raise CLIError(f"--price {text!r}: expected MODEL=IN,OUT in USD per million tokens, e.g. openai:gpt-4o=2.5,10")
    return model, (prompt, completion)


def cmd_view(args: argparse.Namespace) -> int:
    from voirdire.web.server import Viewer  # the web app's imports only when it is asked for

    viewer = Viewer(args.sources or ["transcripts"], port=args.port, prices=dict(map(parse_price, args.price)))
    print(f"voirdire view: {viewer.url}  (Ctrl-C stops it)", flush=True)
    with suppress(KeyboardInterrupt):  # Ctrl-C is how the viewer is meant to stop
        viewer.serve()
    return 0


def cmd_export_html(args: argparse.Namespace) -> int:
    from voirdire.web.export import export_file

    print(export_file(args.transcript, args.out, session=args.session))
    return 0
