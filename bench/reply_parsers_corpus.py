"""Every reply reader on the one labelled corpus (``tests/replies/corpus.jsonl``): flips, over-reads, refusals.

A *flip* is a value other than the label where neither is a refusal; an *over-read* is a value read from a reply
labelled ``refuse``; the *refusal rate* is the share of replies with a non-refuse label that the reader refused
(each one an inconclusive item, never a wrong one). Numbers per reader, for the whole corpus and its held-out part.

    python bench/reply_parsers_corpus.py [--at COMMIT] [--out docs/results/reply_corpus.json]

``--at COMMIT`` measures the reader modules as that commit had them (``git show``) on today's corpus: the
numbers before the core reader are ``--at 897e2b39``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.replies.readers import CURRENT, Table, read, readers_at  # noqa: E402

CORPUS = ROOT / "tests/replies/corpus.jsonl"


def measure(rows: list[dict], readers: Table = CURRENT) -> dict[str, dict[str, float | int]]:
    acc: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for r in rows:
        got = read(r, readers)
        for key in (r["reader"], f"{r['reader']} (held-out)" if r["split"] == "held-out" else None):
            if key is None:
                continue
            a = acc[key]
            a["n"] += 1
            a["ok"] += got == r["label"]
            if r["label"] != "refuse":
                a["answerable"] += 1
                a["refused"] += got == "refuse"
                a["flips"] += got not in ("refuse", r["label"])
            else:
                a["over_reads"] += got != "refuse"
    out: dict[str, dict[str, float | int]] = {}
    for key in sorted(acc):
        a = acc[key]
        out[key] = {
            "n": a["n"],
            "accuracy": round(a["ok"] / a["n"], 4),
            "flips": a["flips"],
            "over_reads": a["over_reads"],
            "refusal_rate": round(a["refused"] / a["answerable"], 4) if a["answerable"] else 0.0,
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="write the numbers as JSON here")
    ap.add_argument("--at", metavar="COMMIT", help="measure the readers as this commit had them")
    args = ap.parse_args()
    rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    numbers = measure(rows, readers_at(ROOT, args.at) if args.at else CURRENT)
    print("| reader | n | accuracy | flips | over-reads | refusal rate |\n|---|---|---|---|---|---|")
    for key, m in numbers.items():
        cells = f"{m['n']} | {m['accuracy']:.3f} | {m['flips']} | {m['over_reads']} | {m['refusal_rate']:.3f}"
        print(f"| {key} | {cells} |")
    if args.out:
        args.out.write_text(json.dumps(numbers, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
