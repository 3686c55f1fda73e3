"""Reading time of every reply reader against the linear bound, on the reply fuzz's generated replies.

The test suite checks that each reader answers or refuses every generated reply (``tests/core/test_parser_fuzz.py``,
``tests/replies/``) and asserts on no clock; this script measures what those tests used to assert on: the CPU time
of the reading thread (so another process on the machine does not count), per reply, against a bound of
``--bound-s`` plus ``--per-char-s`` per character (0.05 s + 12 µs: 1.25 s for a 100k-character reply; a linear
reader of 100k characters takes a fraction of it, a quadratic one tens of seconds). A reply over its bound is read
twice more and the fastest kept (a garbage collection may have landed in it). Exit status 1 when any reply stays
over its bound. Usage::

    python -m bench.reply_readers_linear                  # every reader of the fuzz, 10,000 replies each
    python -m bench.reply_readers_linear --readers core_yes_no parse_decision --json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections.abc import Callable
from typing import Any


def timed(read: Callable[[str], Any], text: str, refusal: type[BaseException]) -> float:
    start = time.thread_time()
    with contextlib.suppress(refusal):
        read(text)
    return time.thread_time() - start


def long_units() -> dict[str, tuple[Callable[[str], Any], str]]:
    """The 100,000-character replies of tests/replies (one unit repeated), each with the reader it is fed to."""
    from tests.replies.readers import read
    from tests.replies.test_corpus import LONG_REPLIES
    from tests.replies.test_readers import LONG, NLI, SAME, SCALE, VERDICT
    from voirdire.replies import read_label, read_number, read_polar, read_yes_no

    cases: dict[str, tuple[Callable[[str], Any], str]] = {}
    for name, unit in LONG_REPLIES.items():
        cases[f"corpus:{name}"] = (lambda t, r=name: read({"reader": r, "text": t, "scale": "none"}), unit)
    core: dict[str, Callable[[str], Any]] = {
        "yes_no": read_yes_no,
        "yes_no_same": lambda t: read_yes_no(t, SAME),
        "polar": lambda t: read_polar(t, VERDICT),
        "label": lambda t: read_label(t, NLI),
        "number": lambda t: read_number(t, 1, 5, SCALE),
    }
    for unit_name, unit in LONG.items():
        for reader_name, reader in core.items():
            cases[f"core:{reader_name}:{unit_name}"] = (reader, unit)
    return {k: (r, (u * (100_000 // len(u) + 1))[:100_000]) for k, (r, u) in cases.items()}


def main(argv: list[str] | None = None) -> int:
    from tests.core.test_parser_fuzz import READERS, replies
    from voirdire.replies.schema import ParseError

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--readers", nargs="*", default=list(READERS), help="names from the fuzz's READERS")
    ap.add_argument("--bound-s", type=float, default=0.05)
    ap.add_argument("--per-char-s", type=float, default=12e-6)
    ap.add_argument("--json", action="store_true", help="one JSON object a reader instead of the table")
    args = ap.parse_args(argv)
    over = 0
    if not args.json:
        print("| reader | replies | CPU total (s) | slowest reply (s) | its length | over the bound |")
        print("|---|---|---|---|---|---|")
    rows: list[dict[str, Any]] = []
    for name in args.readers:
        reader = READERS[name]
        texts = replies(reader.opening)
        rows.append(measure(name, reader.read, texts, args.bound_s, args.per_char_s, ParseError))
    for name, (read, text) in long_units().items():
        rows.append(measure(name, read, (text,), args.bound_s, args.per_char_s, ParseError))
    for row in rows:
        over += row["over"]
        if args.json:
            print(json.dumps(row), flush=True)
        else:
            print(
                f"| {row['reader']} | {row['replies']} | {row['total_s']:.2f} | {row['slowest_s']:.3f} "
                f"| {row['slowest_chars']:,} | {row['over']} |",
                flush=True,
            )
    return 1 if over else 0


def measure(
    name: str,
    read: Callable[[str], Any],
    texts: tuple[str, ...],
    bound_s: float,
    per_char_s: float,
    refusal: type[BaseException],
) -> dict[str, Any]:
    total = worst = 0.0
    worst_chars = over = 0
    for text in texts:
        spent = timed(read, text, refusal)
        bound = bound_s + per_char_s * len(text)
        if spent >= bound:
            spent = min(spent, *(timed(read, text, refusal) for _ in range(2)))
        over += spent >= bound
        total += spent
        if spent > worst:
            worst, worst_chars = spent, len(text)
    return {
        "reader": name,
        "replies": len(texts),
        "total_s": round(total, 3),
        "slowest_s": round(worst, 4),
        "slowest_chars": worst_chars,
        "over": over,
    }


if __name__ == "__main__":
    sys.exit(main())
