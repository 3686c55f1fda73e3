"""Wall time of a run whose every request hangs, against the bound docs/reliability.md states.

Runs the chaos suite's protocol (three calls a session) against ``tests/chaos/server.py`` answering nothing, with
``--timeout T --max-retries R``, ``S`` sessions at concurrency ``C``, in this process, and prints the wall time, its
start-up (until the first request reached the server: imports, reading, the header) and the rest, beside the
bound: a call takes at most (R + 1) x T plus its backoffs; a session whose first call fails ends there; sessions
run in waves of C. Usage::

    python -m bench.time_bound                      # 16 at 16 and 64 at 64, --timeout 1 --max-retries 3
    python -m bench.time_bound --runs 1:1 16:16 64:64 --timeout 1 --retries 3
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import sys
import tempfile
import time
from pathlib import Path

BACKOFF_S, BACKOFF_CAP_S = 0.5, 8.0  # the agents' defaults


def bound_s(sessions: int, concurrency: int, timeout: float, retries: int) -> float:
    backoffs = sum(min(BACKOFF_CAP_S, BACKOFF_S * 2 ** (k - 1)) for k in range(1, retries + 1))
    return math.ceil(sessions / concurrency) * ((retries + 1) * timeout + backoffs)


def measure(sessions: int, concurrency: int, timeout: float, retries: int) -> dict[str, object]:
    from tests.chaos.conftest import questions
    from tests.chaos.protocol import registration, replies
    from tests.chaos.server import ChaosServer
    from voirdire import registry
    from voirdire.cli import main
    from voirdire.registry import plugins

    for module in (registry, plugins):  # the face and the module whose get() reads them
        module.registrations = lambda: {"chaos": registration}  # type: ignore[attr-defined]
        module.command_plugins = lambda: ()  # type: ignore[attr-defined]
    with tempfile.TemporaryDirectory() as tmp, ChaosServer(replies, lambda i, b: "hang", hang_s=120) as server:
        data = questions(Path(tmp) / "qs.jsonl", sessions)
        out = io.StringIO()
        start = time.monotonic()  # the clock the server logs arrivals by
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = main(
                ["run", "chaos", "--data", str(data), "--out", str(Path(tmp) / "t.jsonl"), "--json",
                 "--model", f"openai-compatible:chaos@{server.url}", "--concurrency", str(concurrency),
                 "--timeout", str(timeout), "--max-retries", str(retries), "--max-errors", "100%"]
            )  # fmt: skip
        wall = time.monotonic() - start
        sent = len(server.log)
        startup = min(e.time for e in server.log) - start  # reading, binding, the header: before any request
    errors = json.loads(out.getvalue())["errors"]
    return {
        "sessions": sessions,
        "concurrency": concurrency,
        "wall_s": round(wall, 2),
        "startup_s": round(startup, 2),
        "after_startup_s": round(wall - startup, 2),
        "bound_s": bound_s(sessions, concurrency, timeout, retries),
        "sent": sent,
        "attempts": sessions * (retries + 1),
        "failed": len(errors),
        "exit": code,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", nargs="+", default=["16:16", "64:64"], help="SESSIONS:CONCURRENCY pairs")
    ap.add_argument("--timeout", type=float, default=1.0)
    ap.add_argument("--retries", type=int, default=3)
    args = ap.parse_args(argv)
    for pair in args.runs:
        sessions, concurrency = (int(x) for x in pair.split(":"))
        print(json.dumps(measure(sessions, concurrency, args.timeout, args.retries)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
