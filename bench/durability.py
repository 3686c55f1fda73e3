"""Durability: a long run against a faulty endpoint, killed twice with SIGKILL and resumed, against a clean run.

The chaos suite's protocol (``tests/chaos/protocol.py``: a witness answers and confirms, a judge rules; three calls
a session) runs on N items (default 6,000) against the chaos server on 127.0.0.1, which gives each request a fault
at the given rates (default 10 % HTTP 500, 5 % hangs, 5 % truncated bodies). The judge's ruling depends on the item
(correct for some, incorrect for others), so the decisions are worth comparing. The run is a ``voirdire run chaos``
process of its own (with its workers, if any, in its process group); once the transcript holds a third of the
verdicts the group is killed with SIGKILL, the same command resumes it, is killed again at two thirds, and is
resumed to its end. A clean run (no faults, never killed) gives the reference decisions.

Counted from the transcript (every line read by the strict reader): sessions lost (an item without a verdict),
duplicated (a session with more than one verdict, or two sessions of one item), torn lines (a line that is not a
record), and the items whose decision differs from the clean run's.

    python bench/durability.py                          # 6,000 sessions
    python bench/durability.py --items 600 --workers 2 --json out.json
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.chaos.server import ChaosServer, at_rates  # noqa: E402

CHILD = """
import sys
from tests.chaos.protocol import registration
from voirdire import registry
from voirdire.registry import plugins
regs = {"chaos": registration}
for module in (registry, plugins):
    module.registrations = lambda: regs
    module.command_plugins = lambda: ()
from voirdire.cli import main
sys.exit(main(sys.argv[1:]))
"""


def ruling(question: str) -> str:
    """The judge's ruling on an item: fixed by the item, so that a clean run and a faulty one can be compared."""
    return "correct" if hashlib.sha256(question.encode()).digest()[0] % 3 else "incorrect"


def responder(messages: list[dict[str, Any]]) -> str:
    last = messages[-1]["content"] if messages else ""
    if last.startswith("Answer:"):
        return "Paris."
    if last.startswith("Are you sure"):
        return "Yes."
    if last.startswith("Is the answer right"):
        question = next((m["content"] for m in messages if "Capital" in m.get("content", "")), last)
        return ruling(question)
    return "?"


def verdicts_in(path: Path) -> int:
    try:
        with path.open("rb") as fh:
            return sum(1 for line in fh if b'"kind":"verdict"' in line)
    except FileNotFoundError:
        return 0


def run_until(argv: list[str], out: Path, kill_at: int | None, cwd: Path) -> dict[str, Any]:
    """The run as a process group of its own; SIGKILL to the group once ``out`` holds ``kill_at`` verdicts."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, *argv], cwd=cwd, env=env, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    killed = False
    while proc.poll() is None:
        if kill_at is not None and verdicts_in(out) >= kill_at:
            os.killpg(proc.pid, signal.SIGKILL)
            killed = True
            break
        time.sleep(0.05)
    code = proc.wait()
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    with contextlib.suppress(ProcessLookupError):  # anything of the group left behind by the kill
        os.killpg(proc.pid, signal.SIGKILL)
    return {"exit": code, "killed": killed, "wall_s": round(time.monotonic() - start, 1), "verdicts": verdicts_in(out),
            "stderr_tail": err.strip().splitlines()[-3:]}  # fmt: skip


def audit(path: Path) -> dict[str, Any]:
    """Lost, duplicated and torn, from the transcript alone; each item's decision."""
    from voirdire.transcript import SessionStart, TranscriptError, Verdict, read_lines

    torn, verdicts, items_of = 0, Counter[str](), {}
    decisions: dict[str, str] = {}
    try:
        for rec in read_lines(path):
            if isinstance(rec, SessionStart):
                items_of.setdefault(rec.item_id, set()).add(rec.session_id)
            elif isinstance(rec, Verdict):
                verdicts[rec.session_id] += 1
                decisions[rec.session_id] = rec.decision
    except TranscriptError as exc:
        torn += 1
        print(f"unreadable: {exc}", file=sys.stderr)
    return {
        "sessions_with_a_verdict": len(verdicts),
        "duplicated": sum(1 for n in verdicts.values() if n > 1) + sum(1 for s in items_of.values() if len(s) > 1),
        "torn": torn,
        "decisions": decisions,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=6000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=1.0)
    parser.add_argument("--max-retries", type=int, default=8)
    parser.add_argument("--rates", default="500=0.10,hang=0.05,truncated=0.05")
    parser.add_argument("--kills", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rates = {k: float(v) for k, v in (pair.split("=") for pair in args.rates.split(","))}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        data = folder / "items.jsonl"
        data.write_text(
            "".join(json.dumps({"id": f"q{i:05d}", "question": f"Capital {i}?"}) + "\n" for i in range(args.items))
        )
        common = ["run", "chaos", "--data", str(data), "--no-progress", "--concurrency", str(args.concurrency),
                  "--timeout", str(args.timeout), "--max-retries", str(args.max_retries),
                  "--max-errors", "100%"]  # fmt: skip
        if args.workers > 1:
            common += ["--workers", str(args.workers)]
        result: dict[str, Any] = {"items": args.items, "rates": rates, "concurrency": args.concurrency,
                                  "workers": args.workers, "timeout": args.timeout,
                                  "max_retries": args.max_retries}  # fmt: skip
        with ChaosServer(responder) as server:
            clean = folder / "clean.jsonl"
            result["clean_run"] = run_until([*common, "--out", str(clean), "--model",
                                             f"openai-compatible:m@{server.url}"], clean, None, folder)  # fmt: skip
            clean_audit = audit(clean)
        with ChaosServer(responder, at_rates(rates, seed=7), hang_s=args.timeout * 3) as server:
            faulty = folder / "faulty.jsonl"
            argv = [*common, "--out", str(faulty), "--model", f"openai-compatible:m@{server.url}"]
            runs = []
            for k in range(args.kills):
                runs.append(run_until(argv, faulty, args.items * (k + 1) // (args.kills + 1), folder))
            runs.append(run_until(argv, faulty, None, folder))
            if runs[-1]["exit"] != 0:  # sessions that failed past their retries: the same command once more
                runs.append(run_until(argv, faulty, None, folder))
            result["faulty_runs"] = runs
            result["requests_served"] = len(server.log)
            result["faults_served"] = {k: v for k, v in server.faults().items() if k != "ok"}
        faulty_audit = audit(faulty)
        wanted = {f"q{i:05d}" for i in range(args.items)}
        result["lost"] = len(wanted - set(faulty_audit["decisions"]))
        result["duplicated"] = faulty_audit["duplicated"]
        result["torn"] = faulty_audit["torn"]
        result["clean_lost"] = len(wanted - set(clean_audit["decisions"]))
        differ = [s for s in wanted if faulty_audit["decisions"].get(s) != clean_audit["decisions"].get(s)]
        result["decisions_differing_from_clean"] = len(differ)
        result["decision_counts"] = dict(Counter(clean_audit["decisions"].values()))
        result["transcript_mb"] = round(faulty.stat().st_size / 1e6, 1)
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
