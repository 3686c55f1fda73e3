"""``voirdire compare RUN_A RUN_B ...``: runs over the same items, verdict by verdict (``analysis.compare``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from voirdire.base import mask_secrets
from voirdire.cli.options import at_least


def register(sub: Any) -> None:
    p = sub.add_parser(
        "compare",
        help="compare runs over the same items: verdicts side by side, agreement and Cohen's κ, gold agreement",
    )
    p.add_argument("transcripts", nargs="+", type=Path, metavar="RUN", help="two or more transcripts")
    p.add_argument("--by", choices=["decision", "accepted"], default="decision",
                   help="compare the verdicts' decisions (default) or only accepted/rejected")  # fmt: skip
    p.add_argument("--disagree", action="store_true", help="list only the items the runs disagree on")
    p.add_argument("--rows", type=at_least(0), default=50, help="items listed (default 50; --json has all)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--plot", type=Path, metavar="DIR", help="also write the agreement heatmaps as SVG into DIR")
    p.set_defaults(func=cmd_compare)


def cmd_compare(args: argparse.Namespace) -> int:
    if args.plot is not None:
        from voirdire.analysis import require

        require()
    # The analysis and the certificate's paired statistics: imported by this command, not by `voirdire --help`.
    from voirdire.analysis import comparison_charts
    from voirdire.certificate import compare_and_pair

    # The runs side by side, and McNemar and paired bootstrap intervals: one pass over each run's file for both.
    c, paired = compare_and_pair(args.transcripts, by=args.by)
    if args.json:
        payload = c.model_dump(mode="json") | {"paired": [p.model_dump(mode="json") for p in paired]}
        if args.disagree:
            payload["rows"] = [r for r in payload["rows"] if r["agree"] is False]
        print(mask_secrets(json.dumps(payload, indent=1, ensure_ascii=False)))
    else:
        from voirdire.base import shown

        print(mask_secrets(shown(c.text(disagree_only=args.disagree, limit=args.rows))))
        print(mask_secrets(shown("\n".join(p.text() for p in paired))))
    if args.plot is not None:
        from voirdire.analysis import save

        written = save(comparison_charts(c), args.plot)
        print("wrote " + ", ".join(map(str, written)), file=sys.stderr)
    return 0
