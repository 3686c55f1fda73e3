"""Paper mode versus structured mode on the embedded model: how many replies can be read, per protocol.

    python bench/structured_modes.py [--only lmvlm|qa|nodata] [--limit 20]

Runs, in both modes with the same data and settings (fresh transcripts under transcripts/bench-structured/):

* LMvLM on the first N PopQA questions (``voirdire examine --questions ... --max-tokens 128``): the share of
  inconclusive examiner decisions (§2 counts them as rejections);
* QA entailment on the first N EVOUNA NQ items (``voirdire qa-eval --evaluator entailment --partial-marks
  --max-tokens 96``): the share of unreadable replies;
* the No-Data LLM evaluator on the first N IP datapoints (``voirdire nodata --data ip --evaluator llm
  --rounds 1 --max-tokens 64``, one EV round to bound the run time): the share of replies that followed the
  anchored format.

Writes docs/results/structured_modes.json. The embedded model cannot judge facts: these numbers measure whether
its replies can be read, not whether they are right.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import platform
import time
from collections import Counter
from pathlib import Path
from typing import Any

from voirdire.cli import main
from voirdire.transcript import Message, ModelCall, ParseFailure, load

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
OUT = ROOT / "transcripts" / "bench-structured"


def commands(limit: int) -> dict[str, list[str]]:
    return {
        "lmvlm": ["examine", "--questions", str(DATA / "popqa" / "popqa_longtail_merged.jsonl"), "--limit",
                  str(limit), "--max-tokens", "128"],
        "qa": ["qa-eval", "--data", str(DATA / "evouna" / "NQ.json"), "--evaluator", "entailment", "--limit",
               str(limit), "--partial-marks", "--max-tokens", "96"],
        "nodata": ["nodata", "--data", "ip", "--evaluator", "llm", "--limit", str(limit), "--rounds", "1",
                   "--max-tokens", "64"],
    }  # fmt: skip


def measure(name: str, argv: list[str], structured: bool, rerun: bool = True) -> dict[str, Any]:
    out = OUT / f"{name}-{'structured' if structured else 'paper'}.jsonl"
    full = [*argv, "--out", str(out), "--fresh", "--no-progress", "--json", *(["--structured"] if structured else [])]
    start = time.perf_counter()
    code = None
    if rerun:
        with contextlib.redirect_stdout(io.StringIO()):
            code = main(full)
    wall = time.perf_counter() - start
    t = load(out)
    calls = [e for s in t.sessions.values() for e in s.of_kind(ModelCall)]
    # the model roles' replies to prompt files (a rule agent's replies carry no prompt)
    replies = [e for s in t.sessions.values() for e in s.of_kind(Message) if e.receiver == "moderator" and e.prompt]
    failures = [e for s in t.sessions.values() for e in s.of_kind(ParseFailure)]
    decisions = Counter(s.verdict.decision for s in t.sessions.values() if s.verdict is not None)
    row: dict[str, Any] = {
        "command": "voirdire " + " ".join(full).replace(str(ROOT.parent), ".."),
        "exit": code,
        "wall_s": round(wall, 1) if rerun else None,
        "sessions": len(t.sessions),
        "model_calls": len(calls),
        "replies": len(replies),
        "unreadable": len(failures),
        "unreadable_pct": round(100 * len(failures) / len(replies), 1) if replies else None,
        "unreadable_by_prompt": dict(Counter(e.prompt for e in failures)),
        "replies_by_prompt": dict(Counter(e.prompt for e in replies)),
        "enforcement": dict(Counter(str(c.enforcement) for c in calls)),
        "finish_reasons": dict(Counter(str(c.finish_reason) for c in calls)),
        "decisions": dict(decisions),
    }
    if name == "lmvlm":
        exams = [e for s in t.sessions.values() if s.verdict for e in s.verdict.statistics.get("examinations", [])]
        row["inconclusive_pct"] = round(100 * sum(e["decision"] == "inconclusive" for e in exams) / len(exams), 1)
    return row


def main_() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", choices=["lmvlm", "qa", "nodata"], action="append")
    ap.add_argument("--limit", type=int, default=20)
    ap.add_argument("--from-transcripts", action="store_true", help="recount the last runs' transcripts, run nothing")
    args = ap.parse_args()
    results_path = ROOT / "docs" / "results" / "structured_modes.json"
    results = json.loads(results_path.read_text()) if results_path.exists() else {}
    for name, argv in commands(args.limit).items():
        if args.only and name not in args.only:
            continue
        if args.from_transcripts:
            old = results.get(name, {})
            rows = {mode: measure(name, argv, mode == "structured", rerun=False) for mode in ("paper", "structured")}
            for mode, row in rows.items():  # keep the measured run's exit status and wall time
                row.update({k: old.get(mode, {}).get(k) for k in ("exit", "wall_s")})
            results[name] = rows
        else:
            results[name] = {mode: measure(name, argv, mode == "structured") for mode in ("paper", "structured")}
        for mode, row in results[name].items():
            print(name, mode, {k: row[k] for k in ("unreadable_pct", "unreadable", "replies", "wall_s")})
    results["meta"] = {"machine": f"{platform.machine()}, {platform.python_version()}", "limit": args.limit}
    results_path.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main_()
