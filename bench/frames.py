"""``sessions_frame()`` on transcripts of 2,000, 5,000 and 10,000 sessions: its time and peak memory, and how
they grow with the number of sessions (linear: the time and memory per session stay flat).

The transcripts are built from one real session: a scripted cross-examination (4 model calls, 8 messages, 19
events) run once, its lines copied with a new session and item id for every session, so each transcript holds
what a run of that many such sessions would. Each size is measured in a fresh process (``--one N``), so one
size's memory does not count in another's: reading the transcript (``voirdire.load``, which validates every
line) and building the frame are timed apart by the process's CPU clock, best of ``--repeat``; the peak is
tracemalloc's over the frame's build alone (Python's allocations, pandas' arrays included), measured in a
pass of its own since tracing slows the build. Usage::

    python -m bench.frames                    # 2,000, 5,000 and 10,000 sessions, a table
    python -m bench.frames --sizes 1000 20000 --json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

SIZES = (2_000, 5_000, 10_000)

EXAMINER = """rules:
  - match: verify the correctness of the following claim
    reply: "1. Where is it?"
  - match: Do you have any follow-up questions
    reply: "No"
  - match: correct or incorrect\\?
    reply: "The claim is incorrect."
"""
EXAMINEE = """rules:
  - match: regarding your claim
    reply: "It is in France."
"""


def one_session(folder: Path) -> list[dict[str, Any]]:
    """The lines of a transcript of one scripted session (header first)."""
    import voirdire

    (folder / "examiner.yaml").write_text(EXAMINER)
    (folder / "examinee.yaml").write_text(EXAMINEE)
    models = {"examiner": f"scripted:{folder / 'examiner.yaml'}", "examinee": f"scripted:{folder / 'examinee.yaml'}"}
    out = folder / "one.jsonl"
    item = {"id": "s", "claim": "Paris is the capital of Germany."}
    voirdire.run("cross_examination", [item], models=models, out=out)
    return [json.loads(line) for line in out.read_text().splitlines()]


def build(lines: list[dict[str, Any]], n: int, out: Path) -> None:
    """A transcript of ``n`` copies of the session in ``lines``, each with its own session and item id."""
    header, events = lines[0], lines[1:]
    with out.open("w") as fh:
        fh.write(json.dumps(header) + "\n")
        for i in range(n):
            sid = f"s{i}"
            for event in events:
                copy = dict(event, session_id=sid)
                if copy["kind"] == "session_start":
                    copy["item_id"] = sid
                    copy["item"] = dict(copy["item"], id=sid)
                fh.write(json.dumps(copy) + "\n")


def measure(path: Path, repeat: int) -> dict[str, Any]:
    import voirdire

    load_s, frame_s = [], []
    for _ in range(repeat):
        start = time.process_time()
        t = voirdire.load(path)
        load_s.append(time.process_time() - start)
        start = time.process_time()
        frame = t.sessions_frame()
        frame_s.append(time.process_time() - start)
    tracemalloc.start()
    t.sessions_frame()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {
        "sessions": len(frame),
        "columns": len(frame.columns),
        "load_s": min(load_s),
        "frame_s": min(frame_s),
        "frame_peak_mib": peak / 2**20,
        "frame_memory_mib": frame.memory_usage(deep=True).sum() / 2**20,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--json", action="store_true")
    p.add_argument("--one", type=Path, help=argparse.SUPPRESS)  # a child process: measure this transcript
    args = p.parse_args(argv)
    if args.one:
        print(json.dumps(measure(args.one, args.repeat)))
        return 0
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        lines = one_session(folder)
        for n in args.sizes:
            path = folder / f"t{n}.jsonl"
            build(lines, n, path)
            child = [sys.executable, "-m", "bench.frames", "--one", str(path), "--repeat", str(args.repeat)]
            done = subprocess.run(child, capture_output=True, text=True, check=True)
            row = json.loads(done.stdout.splitlines()[-1]) | {"file_mib": path.stat().st_size / 2**20}
            rows.append(row)
            path.unlink()
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'sessions':>9} {'file MiB':>9} {'load s':>8} {'frame s':>8} {'µs/session':>11} {'peak MiB':>9} "
          f"{'KiB/session':>12} {'frame MiB':>10}")  # fmt: skip
    for r in rows:
        per = 1e6 * r["frame_s"] / r["sessions"]
        kib = 1024 * r["frame_peak_mib"] / r["sessions"]
        print(f"{r['sessions']:>9,} {r['file_mib']:>9.1f} {r['load_s']:>8.2f} {r['frame_s']:>8.3f} {per:>11.1f} "
              f"{r['frame_peak_mib']:>9.1f} {kib:>12.2f} {r['frame_memory_mib']:>10.1f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
