"""Benchmark: LMvLM cross-examination of N PopQA questions on the embedded model (both roles).

Writes docs/results/popqa<N>_embedded.json: the §4.1 metrics report, wall time, model-call latency, completion
tokens per second and peak memory. Run: .venv/bin/python bench/cross_examination_popqa.py [--limit 20]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import time
from pathlib import Path

from voirdire.models import RoleSettings
from voirdire.protocols.cross_examination.api import examine_dataset
from voirdire.transcript import ModelCall, load

ROOT = Path(__file__).resolve().parent.parent
POPQA = ROOT.parent / "shared" / "data" / "popqa" / "popqa_longtail_merged.jsonl"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=20)
    ap.add_argument("--max-tokens", type=int, default=128)
    args = ap.parse_args()
    out = ROOT / "transcripts" / f"bench-popqa{args.limit}.jsonl"
    out.unlink(missing_ok=True)
    start = time.perf_counter()
    result, report = examine_dataset(
        POPQA, out=out, limit=args.limit, models={"*": RoleSettings(model="local", max_tokens=args.max_tokens)}
    )
    wall = time.perf_counter() - start
    calls = [e for s in load(out).sessions.values() for e in s.events if isinstance(e, ModelCall)]
    tokens = sum(c.usage.completion_tokens for c in calls)
    busy = sum(c.latency_s for c in calls)
    summary = {
        "command": f"python bench/cross_examination_popqa.py --limit {args.limit} --max-tokens {args.max_tokens}",
        "model": "local (SmolLM2-135M-Instruct Q4_1, llama.cpp, 2 CPU cores), examiner and examinee",
        "sessions": len(result.verdicts),
        "errors": len(result.errors),
        "wall_s": round(wall, 1),
        "s_per_session": round(wall / max(1, args.limit), 2),
        "model_calls": len(calls),
        "latency_s_median": round(statistics.median(c.latency_s for c in calls), 3) if calls else None,
        "completion_tokens": tokens,
        "completion_tokens_per_s": round(tokens / busy, 1) if busy else None,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "report": report.model_dump(mode="json", exclude={"rows"}),
    }
    dest = ROOT / "docs" / "results" / f"popqa{args.limit}_embedded.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps({k: v for k, v in summary.items() if k != "report"}, indent=2))
    print(f"written: {dest}")


if __name__ == "__main__":
    main()
