"""Reading a big run back: what `report`, `calibrate`, `compare`, `export-html` and the viewer cost as a run grows.

Transcripts are made by ``bench/viewer_transcript.py`` (LMvLM sessions in the real schema; run B with another
seed, so the comparison has disagreements). Each command runs in a fresh process, and its CPU seconds (user +
system) and peak RSS are read from that process alone (``os.wait4``). The viewer is measured in fresh processes
too: the index build with no index on disk (the run list: the run's index and its search rows, one read of the
file) and a search right after it, then, in a process that finds the index on disk, the first session page from
the middle of the file, the same page again (warm), the first search and, after another run's 10 sessions are
appended to the file, the same page once more, then after a second append (both taken off again after). The first
append costs the protocol's import, once a process: its report says which verdicts agree with gold. That process
runs twice: first with an empty cache folder (a first launch: the page's templates are compiled), then with the
one it left (every later launch: the compiled templates are loaded). Python's own bytecode is written and used, as
an installed package's is (``PYTHONDONTWRITEBYTECODE`` is dropped from the processes' environment).

    python bench/reads.py --sizes 1000 10000 --reps 3
    python bench/reads.py --sizes 50000 --reps 1 --skip export-html --json docs/results/reads.json

Prints a markdown table: the median and range of each measure per size, and the growth of the median from the
second-largest size to the largest.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from viewer_transcript import generate

VIEWER = """
import json, os, resource, sys, time
from pathlib import Path
from starlette.testclient import TestClient
from voirdire.web.app import create_app
from voirdire.web.catalog import Library
from voirdire.web.search import search_of
folder, what, sid = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
library = Library([folder])
client = TestClient(create_app(library), base_url="http://127.0.0.1", raise_server_exceptions=True)
out = {}
def timed(name, url, **params):
    start = time.process_time()
    answer = client.get(url, params=params)
    out[name] = round(time.process_time() - start, 4)
    assert answer.status_code == 200, (url, answer.status_code)
if what == "build":
    timed("index build (run and search)", "/")
    timed("search right after the build", "/search", q="river")
    assert search_of(library).building is None  # nothing was left to index
else:
    client.get("/")  # the run list: the index is opened (found on disk), nothing rebuilt
    timed("first session page", f"/run/a.jsonl/session/{sid}")
    timed("warm session page", f"/run/a.jsonl/session/{sid}")
    timed("first search", "/search", q="capital")
    if len(sys.argv) > 4:  # a live run: another run's lines appended, then the same page, then the file as it was
        run, extra = folder / "a.jsonl", Path(sys.argv[4]).read_bytes()
        size = run.stat().st_size
        try:
            for when in ("the first append", "a later append"):  # the first imports the protocol's report
                with run.open("ab") as fh:
                    fh.write(extra)
                timed(f"session page after {when}", f"/run/a.jsonl/session/{sid}")
        finally:
            os.truncate(run, size)
print(json.dumps(out))
"""


def measured(argv: list[str], cwd: Path, cache: Path | None = None) -> tuple[float, float, str]:
    """CPU seconds and peak RSS (MB) of one fresh process running ``argv`` (``cache``: its user cache folder), and
    what it printed."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update({"NO_COLOR": "1", **({"XDG_CACHE_HOME": str(cache)} if cache else {})})
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: exit {proc.returncode}\n{text[-2000:]}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, text


def one_size(n: int, reps: int, skip: set[str], work: Path) -> dict[str, dict[str, list[float]]]:
    folder = work / str(n)
    folder.mkdir()
    a, b = folder / "a.jsonl", folder / "b.jsonl"
    generate(a, n, seed=1)
    generate(b, n, seed=2)
    more = work / f"more-{n}.jsonl"  # what a live run appends between two pages: a run of 10 sessions
    generate(more, 10, seed=3)
    voirdire = [sys.executable, "-m", "voirdire"]
    commands = {
        "report": [*voirdire, "report", str(a)],
        "calibrate": [*voirdire, "calibrate", str(a)],
        "compare": [*voirdire, "compare", str(a), str(b)],
        "export-html": [*voirdire, "export-html", str(a), "--out", str(folder / "a.html")],
    }
    found: dict[str, dict[str, list[float]]] = {}

    def keep(name: str, cpu: float, rss: float | None = None) -> None:
        row = found.setdefault(name, {"cpu_s": [], "rss_mb": []})
        row["cpu_s"].append(cpu)
        if rss is not None:
            row["rss_mb"].append(rss)

    sid = f"q{n // 2:05d}"
    for rep in range(reps):
        for name, argv in commands.items():
            if name not in skip:
                cpu, rss, _ = measured(argv, folder)
                keep(name, cpu, rss)
        if "viewer" in skip:
            continue
        for index in folder.glob(".*.index*"):
            index.unlink()
        cache = work / f"cache-{n}-{rep}"  # the user cache folder of this round's viewer processes, empty at first
        cpu, rss, text = measured([sys.executable, "-c", VIEWER, str(folder), "build", sid], folder, cache)
        keep("viewer: index build (process)", cpu, rss)
        for name, seconds in json.loads(text.strip().splitlines()[-1]).items():
            keep(f"viewer: {name}", seconds)
        for launch in ("first launch", "later launch"):
            if launch == "first launch":  # the run list's templates were compiled by the build: start over
                shutil.rmtree(cache / "voirdire" / "templates", ignore_errors=True)
            argv = [sys.executable, "-c", VIEWER, str(folder), "pages", sid]
            argv += [str(more)] if launch == "later launch" else []
            _, rss, text = measured(argv, folder, cache)
            for name, seconds in json.loads(text.strip().splitlines()[-1]).items():
                if launch == "later launch" or name == "first session page":
                    label = f"{name}, {launch}" if name == "first session page" else name
                    keep(f"viewer: {label}", seconds, rss if name == "first session page" else None)
    return found


def spread(values: list[float]) -> str:
    if not values:
        return "–"
    return f"{statistics.median(values):.3g} ({min(values):.3g}–{max(values):.3g})"


def table(results: dict[int, dict[str, dict[str, list[float]]]]) -> str:
    sizes = sorted(results)
    names = list(dict.fromkeys(name for size in sizes for name in results[size]))
    head = "| measure | " + " | ".join(f"{s:,} sessions" for s in sizes)
    grow = len(sizes) > 1
    head += f" | growth {sizes[-2]:,} → {sizes[-1]:,} |" if grow else " |"
    lines = [head, "|" + "---|" * (len(sizes) + 1 + grow)]
    for name in names:
        for unit, label in (("cpu_s", "CPU s"), ("rss_mb", "peak RSS MB")):
            cells = [results[s].get(name, {}).get(unit, []) for s in sizes]
            if not any(cells):
                continue
            row = f"| {name}, {label} | " + " | ".join(spread(c) for c in cells)
            if grow:
                low, high = cells[-2], cells[-1]
                ratio = statistics.median(high) / statistics.median(low) if low and high else None
                row += f" | {ratio:.2f}× |" if ratio else " | – |"
            else:
                row += " |"
            lines.append(row)
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--skip", nargs="*", default=[], help="report calibrate compare export-html viewer")
    parser.add_argument("--json", type=Path, help="also write the measurements here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="voirdire-reads-") as tmp:
        results = {n: one_size(n, args.reps, set(args.skip), Path(tmp)) for n in args.sizes}
    print(f"command: `python bench/reads.py {' '.join(sys.argv[1:])}`; CPU of each fresh process, "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f} at the end\n")  # fmt: skip
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps({str(k): v for k, v in results.items()}, indent=1) + "\n")


if __name__ == "__main__":
    main()
