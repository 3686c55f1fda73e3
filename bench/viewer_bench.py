"""How fast the viewer opens a large run: a synthetic 10,000-session cross-examination transcript (the real schema,
``bench/viewer_transcript.py``), served by ``voirdire view`` in a fresh process, timed over HTTP.

Measured: the one-time index build (one pass over the file, kept beside it), then in a new viewer process that
finds the index on disk, the first and the warm opening of the run list, the first page of sessions, one session
from the middle of the file and a page of a filtered list, plus a free-text search over every session.

    python bench/viewer_bench.py                       # 10,000 sessions in a temporary folder
    python bench/viewer_bench.py --sessions 2000 --json docs/results/viewer_bench.json

``--scale`` measures what the viewer costs as a run grows, for one or more versions of voirdire side by side
(``--version NAME=PYTHONPATH``, interleaved round by round, each in its own copy of the transcript): (d) the index
built by a fresh process (wall, peak RSS), (a) the run list's first answer from a fresh viewer that finds the index
on disk, (b) the warm run list, (c) a warm session page from the middle of the file, and (e) in a fresh process
holding the index, the refresh after 1,000 more sessions are appended. Medians and ranges over ``--rounds``.

    python bench/viewer_bench.py --scale --sessions 10000 50000 --rounds 3 \
        --version before=/tmp/viewer-before --version after=
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from viewer_memory import build_peak
from viewer_transcript import generate

from voirdire.web.index import TranscriptIndex, default_store


def fetch(url: str) -> tuple[float, int, str]:
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as answer:
        body = answer.read().decode()
    return time.perf_counter() - start, answer.status, body


def timed(url: str, repeat: int, must_hold: str) -> dict[str, float]:
    first, status, body = fetch(url)
    assert status == 200 and must_hold in body, (url, must_hold)
    warm = [fetch(url)[0] for _ in range(repeat)]
    median, worst = statistics.median(warm), max(warm)
    return {"first_s": round(first, 4), "warm_median_s": round(median, 4), "warm_max_s": round(worst, 4)}


APPEND = """
import json, sys, time
from pathlib import Path
from voirdire.web.index import TranscriptIndex
path, more = Path(sys.argv[1]), Path(sys.argv[2])
index = TranscriptIndex(path)
start = time.perf_counter()
index.refresh()  # the index from disk, nothing new
loaded = time.perf_counter() - start
with path.open("ab") as out, more.open("rb") as extra:
    while chunk := extra.read(1 << 20):
        out.write(chunk)
start = time.perf_counter()
assert index.refresh()
appended = time.perf_counter() - start
print(json.dumps({"load_s": loaded, "refresh_s": appended, "code": sys.modules["voirdire.web.index"].__file__}))
"""


def serve(folder: Path, env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "voirdire.cli", "view", str(folder), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        env={**env, "PYTHONUNBUFFERED": "1"},
        cwd=folder,  # not the checkout: the current folder comes first on sys.path, before PYTHONPATH
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().split()[2]


def scale_round(base: Path, more: Path, folder: Path, env: dict[str, str], repeat: int, sid: str) -> dict[str, float]:
    """One round of (a)-(e) for one version, on a fresh copy of ``base``."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    path = folder / "big.jsonl"
    shutil.copy(base, path)
    out: dict[str, float] = {}
    built = build_peak(path, env)
    out["d_build_s"], out["d_build_peak_rss_mb"] = built["build_s"], built["peak_rss_mb"]
    proc, url = serve(folder, env)
    try:
        out["a_run_list_first_s"] = fetch(url)[0]
        out["b_run_list_warm_s"] = statistics.median(fetch(url)[0] for _ in range(repeat))
        page = url + f"run/big.jsonl/session/{sid}"
        assert fetch(page)[1] == 200
        out["c_session_page_warm_s"] = statistics.median(fetch(page)[0] for _ in range(repeat))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    run = subprocess.run([sys.executable, "-c", APPEND, str(path), str(more)], capture_output=True, text=True,
                         check=True, env=env, cwd=folder)  # fmt: skip
    appended = json.loads(run.stdout.strip().splitlines()[-1])
    out["e_index_from_disk_s"], out["e_refresh_after_1000_s"] = appended["load_s"], appended["refresh_s"]
    print(f"  ({appended['code']})", flush=True)
    return out


def scale(args: argparse.Namespace, folder: Path) -> None:
    versions = dict(v.split("=", 1) for v in args.version) or {"this": ""}
    results: dict[str, dict[str, dict[str, list[float]]]] = {}
    more = folder / "more.jsonl"
    generate(more, 1000, seed=1)
    more.write_bytes(more.read_bytes().replace(b'"q0', b'"z0'))  # 1,000 new sessions, not new attempts
    for sessions in args.sessions:
        base = folder / f"base{sessions}.jsonl"
        generate(base, sessions)
        sid = f"q{sessions // 2:05d}"
        for n in range(args.rounds):
            for name, pythonpath in versions.items():
                env = {**os.environ, "PYTHONPATH": pythonpath} if pythonpath else dict(os.environ)
                measured = scale_round(base, more, folder / name, env, args.repeat, sid)
                for key, value in measured.items():
                    results.setdefault(str(sessions), {}).setdefault(name, {}).setdefault(key, []).append(value)
                print(f"{sessions} sessions, round {n + 1}, {name}: {json.dumps(measured)}", flush=True)
        base.unlink()
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    summary = {
        size: {
            name: {key: {"median": statistics.median(v), "min": min(v), "max": max(v)} for key, v in keys.items()}
            for name, keys in by_name.items()
        }
        for size, by_name in results.items()
    }
    for size, by_name in summary.items():
        for name, keys in by_name.items():
            for key, v in keys.items():
                print(f"{size:>6} {name:8} {key:28} {v['median']:9.4f}  [{v['min']:.4f} - {v['max']:.4f}]")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"rounds": results, "summary": summary}, indent=1) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=[10_000])
    parser.add_argument("--scale", action="store_true", help="(a)-(e) above, per size and version")
    parser.add_argument("--version", action="append", default=[], help="NAME=PYTHONPATH (with --scale)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--folder", type=Path, help="where the transcript goes (default: a temporary folder)")
    parser.add_argument("--repeat", type=int, default=5, help="warm requests per page")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args()
    folder = args.folder or Path(tempfile.mkdtemp(prefix="voirdire-viewer-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    if args.scale:
        scale(args, folder)
        return
    args.sessions = args.sessions[0]
    path = folder / "big.jsonl"

    start = time.perf_counter()
    generate(path, args.sessions)
    generated_s = time.perf_counter() - start
    default_store(path).unlink(missing_ok=True)
    start = time.perf_counter()
    index = TranscriptIndex(path)
    index.refresh()
    build_s = time.perf_counter() - start
    middle = index.sessions()[len(index.sessions()) // 2].sid

    proc = subprocess.Popen(
        [sys.executable, "-m", "voirdire.cli", "view", str(folder), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().split()[2]
        pages = {
            "run list": timed(url, args.repeat, "big.jsonl"),
            "first page of sessions": timed(url + "run/big.jsonl", args.repeat, f"of {args.sessions} sessions"),
            "one session (middle of the file)": timed(url + f"run/big.jsonl/session/{middle}", args.repeat, "Verdict"),
            "filtered page (wrong vs gold, with parse failures)": timed(
                url + "run/big.jsonl?gold=wrong&failures=with", args.repeat, "sessions"
            ),
            "last page of sessions": timed(url + f"run/big.jsonl?page={(args.sessions + 49) // 50}", 1, "sessions"),
            "search, two words over every session": timed(url + "run/big.jsonl?q=mountain+king", 1, "sessions"),
        }
    finally:
        proc.terminate()
        proc.wait(timeout=30)

    result = {
        "sessions": args.sessions,
        "transcript_mb": round(path.stat().st_size / 1e6, 1),
        "lines": index.lines,
        "index_mb": round(default_store(path).stat().st_size / 1e6, 1),
        "generate_s": round(generated_s, 1),
        "index_build_s": round(build_s, 2),
        "pages": pages,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
    }
    print(f"{args.sessions} sessions, {result['transcript_mb']} MB, {index.lines} lines ({folder})")
    print(f"index built once in {build_s:.2f} s ({result['index_mb']} MB beside the transcript)")
    print(f"{'page':52} {'first':>8} {'warm median':>12} {'warm max':>9}")
    for name, t in pages.items():
        print(f"{name:52} {t['first_s']:8.3f} {t['warm_median_s']:12.3f} {t['warm_max_s']:9.3f}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
