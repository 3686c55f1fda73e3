"""``voirdire report T --plot DIR``: the report's charts as files (``voirdire.analysis.drawing``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from voirdire.cli.options import CLIError

if TYPE_CHECKING:
    pass


def add_plot_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--plot", type=Path, metavar="DIR", help="also write the report's charts into DIR (matplotlib)")
    p.add_argument("--plot-format", action="append", choices=["svg", "png"], dest="plot_formats",
                   help="chart file format (repeatable; default svg)")  # fmt: skip


def check_plots(args: argparse.Namespace) -> None:
    """Before any work: --plot without matplotlib is a one-line error saying how to install it."""
    if args.plot is not None:
        from voirdire.analysis import require

        require()
        if args.plot.exists() and not args.plot.is_dir():
            raise CLIError(f"--plot {args.plot}: not a folder")
        try:
            args.plot.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CLIError(f"--plot {args.plot}: cannot create the folder ({exc.strerror})") from None


def write_plots(args: argparse.Namespace, extra: Sequence[Any] = ()) -> None:
    """``--plot DIR``: the transcript's charts, then ``extra`` ones (the report's certificate charts)."""
    from voirdire.reports import load_prices

    if args.plot is None:
        return
    from voirdire.analysis import save, transcript_charts

    left: list[Any] = []  # charts with nothing to show: not drawn, one line each says why
    _, charts = transcript_charts(args.transcript, prices=load_prices(args.prices), left_out=left)
    charts = [*charts, *extra]
    for x in left:
        print(f"not drawn: {x.name} ({x.reason})", file=sys.stderr)
    if not charts:
        print(f"no chart to draw in {args.plot}: no session has a verdict or a model call yet", file=sys.stderr)
        return
    written = save(charts, args.plot, tuple(args.plot_formats or ["svg"]))
    print(f"{len(written)} chart files in {args.plot}: " + ", ".join(p.name for p in written), file=sys.stderr)
