"""How fast the viewer opens a large run: a synthetic 10,000-session cross-examination transcript (the real schema,
``bench/viewer_transcript.py``), served by ``voirdire view`` in a fresh process, timed over HTTP.

Measured: the one-time index build (one pass over the file, kept beside it), then in a new viewer process that
finds the index on disk, the first and the warm opening of the run list, the first page of sessions, one session
from the middle of the file and a page of a filtered list, plus a free-text search over every session.

    python bench/viewer_bench.py                       # 10,000 sessions in a temporary folder
    python bench/viewer_bench.py --sessions 2000 --json docs/results/viewer_bench.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--folder", type=Path, help="where the transcript goes (default: a temporary folder)")
    parser.add_argument("--repeat", type=int, default=5, help="warm requests per page")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args()
    folder = args.folder or Path(tempfile.mkdtemp(prefix="voirdire-viewer-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
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
