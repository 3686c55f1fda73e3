"""Peak memory and CPU of reading a run for calibration (``voirdire.certificate.read_run``, what ``voirdire
calibrate`` and the certificate do first) and of the whole ``voirdire report`` (the report, its intervals and its
certificate section) at several run sizes, each in a fresh process:

    python bench/calibrate_memory.py --sessions 2000 10000 [--rounds 2] [--keep DIR] [--version NAME=DIR ...]

The transcripts are synthetic LMvLM runs in the real schema (``bench/viewer_transcript.py``: questions, follow-ups,
parse failures, verdicts; about 15 KB a session), written once to a temporary folder (or ``--keep DIR``, reused
when there). Prints, per size, the peak RSS (``ru_maxrss`` of the child) and the CPU of ``read_run`` and of
``voirdire report``, median (range) over the rounds; flat memory means the peak does not grow with the sessions.
``--version NAME=DIR`` measures another checkout too (``git worktree add DIR REV``; its voirdire, protocols
included, through ``bench.speed.checkout``), interleaved with this one within each round.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from bench.speed.checkout import CheckoutFinder
sys.meta_path.insert(0, CheckoutFinder(Path(sys.argv[3])))
from voirdire.certificate import read_run
start = time.process_time()
run = read_run(sys.argv[1])
print(json.dumps({"sessions": len(run.sessions), "cpu_s": time.process_time() - start,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def measure(path: Path, code: Path = REPO) -> dict[str, float]:
    """``read_run`` and ``voirdire report`` of ``path`` by the checkout at ``code``, each in a fresh process."""
    child_argv = [sys.executable, "-c", CHILD, str(path), str(REPO), str(code)]
    done = subprocess.run(child_argv, capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    # the command as a user runs it: its own rusage (wait4), not the children's running maximum
    report = [sys.executable, "-m", "bench.speed.checkout", str(code), "report", str(path)]
    child = subprocess.Popen(report, stdout=subprocess.DEVNULL, cwd=REPO)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
    if child.returncode != 0:
        raise SystemExit(f"voirdire report {path} exited {child.returncode}")
    result["report_rss_mb"] = usage.ru_maxrss / 1024
    result["report_cpu_s"] = usage.ru_utime + usage.ru_stime
    return result


def main() -> None:
    from bench.viewer_transcript import generate

    ap = argparse.ArgumentParser(prog="python bench/calibrate_memory.py", description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--sessions", type=int, nargs="+", default=[2000, 10000])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--keep", type=Path, help="write (or reuse) the transcripts here")
    ap.add_argument("--version", action="append", default=[], metavar="NAME=DIR", help="another checkout as well")
    args = ap.parse_args()
    versions = {"this checkout": REPO}
    for spec in args.version:
        name, sep, where = spec.partition("=")
        if not sep or not (Path(where) / "voirdire" / "__init__.py").exists():
            ap.error(f"--version {spec}: expected NAME=DIR, DIR a checkout of voirdire")
        versions[name] = Path(where).resolve()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="voirdire-calibrate-memory-"))
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for n in args.sessions:
        paths[n] = folder / f"lmvlm-{n}.jsonl"
        if not paths[n].exists():
            generate(paths[n], n)
    rows: dict[tuple[str, int], list[dict[str, float]]] = {(v, n): [] for v in versions for n in args.sessions}
    for _ in range(args.rounds):  # sizes and versions interleaved within a round
        for n in args.sessions:
            for name, code in versions.items():
                rows[name, n].append(measure(paths[n], code))

    def med(xs: list[float]) -> str:
        return f"{statistics.median(xs):.1f} ({min(xs):.1f}-{max(xs):.1f})"

    print(f"read_run, {args.rounds} rounds, a fresh process each: median (range)\n")
    print("| version | sessions | file MB | read_run peak RSS MB | read_run CPU s | report peak RSS MB", end="")
    print(" | report CPU s |")
    print("|---|---|---|---|---|---|---|")
    for n in args.sessions:
        size = paths[n].stat().st_size / 2**20
        for name in versions:
            got = rows[name, n]
            cells = [med([r[k] for r in got]) for k in ("peak_rss_mb", "cpu_s", "report_rss_mb", "report_cpu_s")]
            print(f"| {name} | {n:,} | {size:.0f} | {' | '.join(cells)} |")
    if args.keep is None:
        for p in paths.values():
            p.unlink()
        folder.rmdir()


if __name__ == "__main__":
    main()
