"""``voirdire show`` and ``export-html`` on a transcript whose one reply is megabytes without a space (wrapping and
safe text must stay linear), beside a one-line reply: the difference is what the long reply costs.

    python bench/show_long_reply.py [--mb 10]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from voirdire.transcript import (  # noqa: E402
    Message,
    ModelCall,
    RunHeader,
    SessionStart,
    TokenUsage,
    TranscriptWriter,
    Verdict,
)


def write(path: Path, reply: str) -> None:
    base = {"run_id": "r", "session_id": "s"}
    with TranscriptWriter(path) as w:
        w.write(RunHeader(run_id="r", protocol="toy"))
        w.write(SessionStart(**base, seq=1, item_id="s", item={"text": "q"}))
        w.write(ModelCall(**base, seq=2, role="a", model="m", request_digest="d", response="", usage=TokenUsage(),
                          latency_s=0.1))  # fmt: skip
        w.write(Message(**base, seq=3, sender="a", receiver="moderator", content=reply))
        w.write(Verdict(**base, seq=4, decision="ok", accepted=True))


def timed(*args: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "voirdire", *args], check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=10.0, help="size of the long reply in MB (default 10)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    long, short = folder / "long.jsonl", folder / "short.jsonl"
    write(long, "x" * int(args.mb * 1e6) + "\x1b[2J")
    write(short, "one line")
    for name, path in (("one-line reply", short), (f"{args.mb:g} MB reply", long)):
        show = min(timed("show", str(path)) for _ in range(args.repeat))
        export = min(timed("export-html", str(path), "-o", str(folder / "page.html")) for _ in range(args.repeat))
        print(f"{name:>16}: show {show:.2f} s, export-html {export:.2f} s (best of {args.repeat}, with start-up)")


if __name__ == "__main__":
    main()
