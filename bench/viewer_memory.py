"""The viewer's memory on a transcript with one 300 MB line: the peak RSS of a fresh process that indexes the file
and serves its run list, run page, a session, its report and the comparison with a clean copy.

The transcript is a real two-session run (``tests/web``'s scripted LMvLM) with one line of ``--mb`` megabytes put
after its third line (a message whose text is that long: a damaged or foreign file; voirdire writes no such line).

    python bench/viewer_memory.py              # 300 MB
    python bench/viewer_memory.py --mb 300 --baseline

``build_peak`` (used by ``bench/viewer_bench.py --scale``) is the other memory number: the wall and peak RSS
(``ru_maxrss``) of a fresh process that builds the index of a large transcript, with no index on disk.

    python bench/viewer_memory.py --build /tmp/big.jsonl
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import json, resource, sys
from pathlib import Path
from starlette.testclient import TestClient
from voirdire.web.app import create_app
from voirdire.web.catalog import Library
folder = Path(sys.argv[1])
client = TestClient(create_app(Library([folder])), base_url="http://127.0.0.1", raise_server_exceptions=False)
status = {}
for url in ["/", "/run/long.jsonl", "/run/long.jsonl/session/paris", "/run/long.jsonl/report"]:
    status[url] = client.get(url).status_code
status["/compare"] = client.get("/compare", params=[("run", "clean.jsonl"), ("run", "long.jsonl")]).status_code
print(json.dumps({"status": status, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


BUILD = """
import json, resource, sys, time
from pathlib import Path
from voirdire.web.index import TranscriptIndex
start = time.perf_counter()
TranscriptIndex(Path(sys.argv[1])).refresh()
wall = time.perf_counter() - start
print(json.dumps({"build_s": wall, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def build_peak(path: Path, env: dict[str, str] | None = None) -> dict[str, float]:
    """Build ``path``'s index in a fresh process (its stored index removed first): wall and peak RSS."""
    for store in path.parent.glob(f".{path.name}.index*"):
        store.unlink()
    out = subprocess.run(  # run from the transcript's folder: the current folder comes first on sys.path
        [sys.executable, "-c", BUILD, str(path)], capture_output=True, text=True, check=True, env=env, cwd=path.parent
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, default=300)
    parser.add_argument("--baseline", action="store_true", help="also the same pages with no long line (--mb 0)")
    parser.add_argument("--build", type=Path, help="instead: build this transcript's index in a fresh process")
    args = parser.parse_args()
    if args.build:
        print(json.dumps(build_peak(args.build)))
        return
    sys.path.insert(0, str(ROOT))
    from tests.web.test_compare_browser import two_runs

    with tempfile.TemporaryDirectory() as tmp:
        work, folder, scripts = Path(tmp) / "work", Path(tmp) / "runs", Path(tmp) / "scripts"
        for d in (work, folder, scripts):
            d.mkdir()
        clean, _ = two_runs(work, scripts)
        shutil.copy(clean, folder / "clean.jsonl")
        lines = clean.read_bytes().splitlines(keepends=True)
        result: dict[str, object] = {}
        for mb in ([0] if args.baseline else []) + [args.mb]:
            with (folder / "long.jsonl").open("wb") as fh:
                fh.writelines(lines[:3])
                if mb:
                    fh.write(b'{"run_id":"x","session_id":"paris","kind":"message","text":"')
                    block = b"a" * (1 << 20)
                    for _ in range(mb):
                        fh.write(block)
                    fh.write(b'"}\n')
                fh.writelines(lines[3:])
            for index in folder.glob(".*.index"):
                index.unlink()
            out = subprocess.run(
                [sys.executable, "-c", CHILD, str(folder)], capture_output=True, text=True, check=True, cwd=tmp
            )
            measured = json.loads(out.stdout.strip().splitlines()[-1])
            measured["file_mb"] = round((folder / "long.jsonl").stat().st_size / 1e6, 1)
            result[f"line_of_{mb}_mb"] = measured
        print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
