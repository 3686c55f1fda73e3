"""Smoke run: the LLM evaluator of §8 (App. D.2 prompts) on 20 IP datapoints through ``voirdire nodata``.

    python bench/no_data_llm_smoke.py [--model local] [--n 20] [--max-tokens 192] [-- EXTRA NODATA FLAGS]
    python bench/no_data_llm_smoke.py --summarize transcripts/no_data-ip-llm20-embedded.jsonl --wall-s 1234

Runs ``voirdire nodata --data ip --evaluator llm --limit N --max-tokens M --model evaluator=MODEL --fresh`` as a
subprocess (one session per datapoint, every prompt, reply, parse failure and EV round in the transcript), times
it, then reads the transcript back: model calls and their latency, parse failures per prompt, how many replies
parsed at all, EV rounds, success, flips and accuracy. Writes ``docs/results/no_data_llm20_embedded.json``.
With the embedded SmolLM2-135M the point is that the loop completes through the Session and falls back as App.
D.2 says, not the accuracy.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from voirdire.transcript import ModelCall, ParseFailure, Step, load

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results" / "no_data_llm20_embedded.json"


def summarize(path: Path) -> dict[str, Any]:
    t = load(path)
    calls = [c for s in t.sessions.values() for c in s.of_kind(ModelCall)]
    failures = [f for s in t.sessions.values() for f in s.of_kind(ParseFailure)]
    rounds = [e.data for s in t.sessions.values() for e in s.of_kind(Step) if e.name == "nodata.round"]
    verdicts = [s.verdict for s in t.sessions.values() if s.verdict is not None]
    by_prompt = Counter(f.prompt for f in failures)
    gave_up = Counter(f.prompt for f in failures if f.outcome.startswith("gave up"))
    asked = Counter(  # the user turn of each App. D.2 prompt (the system turn is a second message)
        str(m.prompt)
        for s in t.sessions.values()
        for m in s.events
        if getattr(m, "receiver", "") == "evaluator" and getattr(m, "sender", "") == "moderator"
    )
    n = len(verdicts)
    correct = sum(bool(v.statistics.get("correct")) for v in verdicts)
    header = t.header
    return {
        "transcript": str(path),
        "command": header.command if header else None,
        "model": header.roles["evaluator"].spec if header and "evaluator" in header.roles else None,
        "max_tokens": header.roles["evaluator"].max_tokens if header and "evaluator" in header.roles else None,
        "sessions": len(t.sessions),
        "verdicts": n,
        "errors": sum(len(s.errors) for s in t.sessions.values()),
        "model_calls": len(calls),
        "model_seconds": round(sum(c.latency_s for c in calls), 1),
        "completion_tokens": sum(c.usage.completion_tokens for c in calls),
        "finish_length": sum(c.finish_reason == "length" for c in calls),
        "prompts_sent": dict(asked),
        "parse_failures": dict(by_prompt),
        "gave_up": dict(gave_up),
        "replies_parsed": len(calls) - len(failures),
        "ev_rounds": len(rounds),
        "rounds_passed": sum(r["passed"] for r in rounds),
        "success_rate": sum(bool(v.accepted) for v in verdicts) / n if n else None,
        "flip_rate": sum(bool(v.statistics.get("flipped")) for v in verdicts) / n if n else None,
        "accuracy": correct / n if n else None,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="local")
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--max-tokens", type=int, default=192)
    ap.add_argument("--out", type=Path, default=ROOT / "transcripts" / "no_data-ip-llm20-embedded.jsonl")
    ap.add_argument("--summarize", type=Path, help="only read an existing transcript back")
    ap.add_argument("--wall-s", type=float, help="with --summarize: the measured wall time of that run")
    ap.add_argument("--cli-report", type=Path, help="with --summarize: that run's --report file, kept beside")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("extra", nargs="*", help="further voirdire nodata flags (after --)")
    args = ap.parse_args(argv)
    wall = args.wall_s
    path = args.summarize
    report = args.cli_report
    if path is None:
        path = args.out
        report = path.with_suffix(".report.json")
        cmd = [sys.executable, "-m", "voirdire.cli", "nodata", "--data", "ip", "--evaluator", "llm"]
        cmd += ["--limit", str(args.n), "--max-tokens", str(args.max_tokens), "--model", f"evaluator={args.model}"]
        cmd += ["--seed", "0", "--out", str(path), "--report", str(report), "--fresh", "--no-progress", *args.extra]
        start = time.perf_counter()
        subprocess.run(cmd, check=True)
        wall = round(time.perf_counter() - start, 1)
    result: dict[str, Any] = {**summarize(path), "wall_s": wall, "cpus": os.cpu_count()}
    if report is not None and report.exists():
        cli = json.loads(report.read_text(encoding="utf-8"))
        result["cli"] = {k: cli[k] for k in ("elapsed_s", "parameters", "runs") if k in cli}
    print(json.dumps(result, indent=1, ensure_ascii=False))
    if not args.no_write:
        RESULTS.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
