"""Search across runs at scale: a folder of synthetic cross-examination runs (``bench/viewer_transcript.py``, the
viewer bench's transcripts) indexed (``voirdire.web.index``, which holds the search's rows too), then queried.

Measured: the one-time build of every run's index in a fresh process (wall time and that process's peak RSS,
beside the peak RSS of a process that only imports the viewer), the incremental refresh after a run grows by 100
sessions (bytes read, time), and queries in a new ``Search`` that finds the indexes on disk (first and warm median,
in-process) plus the whole ``/search`` page over the app.

    python bench/viewer_search.py                          # 50,000 sessions in 5 runs, in a temporary folder
    python bench/viewer_search.py --sessions 5000 --runs 2 --json /tmp/search.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from viewer_transcript import generate

from voirdire.transcript import HumanLabel, append_label
from voirdire.web.catalog import Library
from voirdire.web.search import Search
from voirdire.web.search_query import parse

QUERIES = (
    "mountain",
    '"capital river"',
    "role:examiner founded",
    "verdict:incorrect role:verdict",
    "verdict:correct founded mountain",
    "q00042",
    "protocol:dcr the",
    "label:disagree",
)


def child(folder: Path, mode: str) -> None:
    """In a fresh process: build every index (``build``) or only import (``idle``); print seconds and peak RSS."""
    start = time.perf_counter()
    if mode == "build":
        last = [0.0]

        def progress(key: str, done: int, total: int) -> None:
            if time.perf_counter() - last[0] > 5:
                last[0] = time.perf_counter()
                print(f"  indexing {key}: {done / 1e6:.0f} of {total / 1e6:.0f} MB", file=sys.stderr, flush=True)

        Search(Library([folder])).build(progress)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"s": round(time.perf_counter() - start, 2), "peak_rss_mb": round(rss_mb, 1)}))


def in_child(folder: Path, mode: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", mode, "--folder", str(folder)], check=True, capture_output=False,
        stdout=subprocess.PIPE, text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def timed(search: Search, text: str, repeat: int) -> dict[str, float | int]:
    times, hits = [], 0
    for _ in range(repeat + 1):
        start = time.perf_counter()
        hits = sum(len(g.hits) for g in search.query(parse(text)))
        times.append(time.perf_counter() - start)
    return {"hits": hits, "first_s": round(times[0], 4), "warm_median_s": round(statistics.median(times[1:]), 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--folder", type=Path, help="where the runs go (default: a temporary folder)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--child", choices=("build", "idle"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.folder, args.child)
        return
    folder = args.folder or Path(tempfile.mkdtemp(prefix="voirdire-search-"))
    folder.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    per = args.sessions // args.runs
    paths = [generate(folder / f"run{n}.jsonl", per, seed=n) for n in range(args.runs)]
    generated_s = time.perf_counter() - start
    for p in folder.glob(".*.index*"):
        p.unlink()
    for n in range(0, min(per, 2000), 10):  # people's labels of 200 items of the first run
        reading = "disagree" if n % 30 == 0 else "agree"
        label = HumanLabel(item_id=f"q{n:05d}", session_id=f"q{n:05d}", verdict="correct", reading=reading,
                           label="incorrect" if reading == "disagree" else "correct", annotator="bench")
        append_label(paths[0], label)
    build = in_child(folder, "build")
    idle = in_child(folder, "idle")

    size = paths[0].stat().st_size
    with paths[0].open("ab") as fh:  # the run grows: 100 more sessions appended
        extra = folder / "grow.tmp"
        generate(extra, 100, seed=99)
        fh.write(b"".join(extra.read_bytes().splitlines(keepends=True)[1:]))
        extra.unlink()
    search = Search(Library([folder]))
    index = dict(search.runs())[paths[0].name]
    index.refresh()  # the index on disk is opened: nothing read
    before = index.size
    start = time.perf_counter()
    index.refresh()
    grow_s = time.perf_counter() - start
    read = index.size - before

    queries = {text: timed(Search(Library([folder])), text, args.repeat) for text in QUERIES}
    from starlette.testclient import TestClient

    from voirdire.web.app import create_app

    client = TestClient(create_app(Library([folder])), base_url="http://127.0.0.1")
    page_times = []
    for _ in range(args.repeat + 1):
        t = time.perf_counter()
        assert client.get("/search", params={"q": "role:examiner founded"}).status_code == 200
        page_times.append(time.perf_counter() - t)

    result = {
        "sessions": per * args.runs,
        "runs": args.runs,
        "transcripts_mb": round(sum(p.stat().st_size for p in paths) / 1e6, 1),
        "index_mb": round(sum(p.stat().st_size for p in folder.glob(".*.index")) / 1e6, 1),
        "generate_s": round(generated_s, 1),
        "build_s": build["s"],
        "build_peak_rss_mb": build["peak_rss_mb"],
        "import_only_peak_rss_mb": idle["peak_rss_mb"],
        "grow": {"appended_mb": round((paths[0].stat().st_size - size) / 1e6, 2), "read_mb": round(read / 1e6, 2),
                 "refresh_s": round(grow_s, 3)},
        "queries": queries,
        "search_page_warm_median_s": round(statistics.median(page_times[1:]), 4),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"load {os.getloadavg()[0]:.1f}",
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
