"""Timing of the review pages on a large run: a synthetic LMvLM transcript of N sessions (bench/viewer_transcript.py),
served by the viewer on 127.0.0.1; the first open of the queue (the whole transcript read once, as calibrate reads
it), the queue again, a label written, a session page with its panel, the runs and sessions lists with labels.

    python bench/review_bench.py --sessions 10000
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from viewer_transcript import generate  # noqa: E402

from voirdire.web.server import Viewer  # noqa: E402


def timed(what: str, call: object) -> object:
    start = time.perf_counter()
    result = call()  # type: ignore[operator]
    print(f"{what:<48} {time.perf_counter() - start:7.3f} s")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10000)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    path = generate(folder / "big.jsonl", args.sessions)
    print(f"{args.sessions} sessions, {path.stat().st_size / 1e6:.0f} MB; load average {os.getloadavg()[0]:.1f}")
    viewer = Viewer([folder], port=0).start()
    base, key = viewer.url, path.name
    try:
        with httpx.Client(timeout=600) as client:
            timed("runs list (index built)", lambda: client.get(base))
            queue = f"{base}run/{key}/review?sample=200&seed=7&annotator=ann"
            page = timed("queue, first open (reads the transcript)", lambda: client.get(queue)).text  # type: ignore[attr-defined]
            timed("queue again", lambda: client.get(queue))
            sid = re.search(r'data-session="([^"]+)"', page).group(1)  # type: ignore[union-attr]
            token = re.search(r'data-token="([^"]+)"', page).group(1)  # type: ignore[union-attr]
            form = {"token": token, "session_id": sid, "reading": "unsure", "annotator": "ann", "sample": "200",
                    "seed": "7"}  # fmt: skip
            headers = {"accept": "application/json", "origin": base.rstrip("/")}
            answer = timed("a label written", lambda: client.post(f"{base}run/{key}/label", data=form, headers=headers))
            assert answer.status_code == 200, answer.text  # type: ignore[attr-defined]
            timed("session page with its panel", lambda: client.get(f"{base}run/{key}/session/{sid}"))
            timed("runs list with labels", lambda: client.get(base))
            timed("sessions list filtered to labelled", lambda: client.get(f"{base}run/{key}?labels=labelled"))
    finally:
        viewer.stop()


if __name__ == "__main__":
    main()
