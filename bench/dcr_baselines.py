"""The non-LLM rows of DCR's Tables 2-4 (ROUGE-1/2/L) and the MiniLM embedding baseline, on every benchmark.

    python bench/dcr_baselines.py [--out docs/results/dcr_baselines.json] [--no-embedding]

Each row is what ``voirdire correlate --data NAME --metric METRIC`` prints; the ROUGE-L rows are also computed
without stemming, the evidence for the one printed row that does not reproduce (QAGS-XSUM ROUGE-L, docs/dcr.md).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from voirdire.protocols.dcr.correlate import baseline

ROWS = [(d, m) for d in ("summeval", "qags-cnn", "qags-xsum") for m in ("rouge-1", "rouge-2", "rouge-l")]
ROWS += [("paws", "rouge-l"), ("msrp", "rouge-l")]
EMBEDDING = [(d, "embedding") for d in ("summeval", "qags-cnn", "qags-xsum", "paws", "msrp")]
UNSTEMMED = [(d, "rouge-l") for d in ("qags-cnn", "qags-xsum")] + [(d, "rouge-2") for d in ("qags-cnn", "qags-xsum")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("docs/results/dcr_baselines.json"))
    ap.add_argument("--no-embedding", action="store_true")
    args = ap.parse_args()
    results = []
    plan = [(d, m, True) for d, m in ROWS] + [(d, m, False) for d, m in UNSTEMMED]
    plan += [] if args.no_embedding else [(d, m, True) for d, m in EMBEDDING]
    for data, metric, stemmer in plan:
        t0 = time.perf_counter()
        r = baseline(data, metric, stemmer=stemmer)
        row = {**r.model_dump(mode="json"), "stemmer": stemmer, "seconds": round(time.perf_counter() - t0, 1)}
        results.append(row)
        print(("" if stemmer else "[no stemmer] ") + r.text(), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"command": "python bench/dcr_baselines.py", "rows": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
