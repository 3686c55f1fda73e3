"""Wall-clock measurements of the chaos suite's scenarios, for docs/reliability.md.

The chaos tests (``tests/chaos/``) assert on what the client decided (deadlines, attempts, waits, the limit's
decisions) and on no clock; the times those scenarios take are measured here, in this process, against the same
server (``tests/chaos/server.py``) and protocol (``tests/chaos/protocol.py``). Each scenario prints one JSON line.

    python -m bench.chaos_timings hangs          # 50 sessions, 5 % of requests hang: wall time against the bound
    python -m bench.chaos_timings retry-after    # gaps the server sees after Retry-After: 1 (twice), an HTTP date
    python -m bench.chaos_timings adaptive       # requests at the server before, during and after a 429 burst
    python -m bench.chaos_timings all --runs 3
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import itertools
import json
import math
import sys
import tempfile
import threading
import time
from email.utils import formatdate
from pathlib import Path
from typing import Any

BACKOFF_S, BACKOFF_CAP_S = 0.5, 8.0  # the agents' defaults


def hangs(sessions: int = 50, concurrency: int = 10, timeout: float = 1.0, retries: int = 3) -> dict[str, Any]:
    """tests/chaos/test_hangs.py's run, timed: the worst case is every attempt timing out, every backoff at its cap."""
    from tests.chaos.conftest import questions
    from tests.chaos.protocol import registration, replies
    from tests.chaos.server import ChaosServer, at_rates
    from voirdire import registry
    from voirdire.cli import main
    from voirdire.registry import plugins

    for module in (registry, plugins):
        module.registrations = lambda: {"chaos": registration}  # type: ignore[attr-defined]
        module.command_plugins = lambda: ()  # type: ignore[attr-defined]
    backoffs = sum(min(BACKOFF_CAP_S, BACKOFF_S * 2 ** (k - 1)) for k in range(1, retries + 1))
    bound = math.ceil(sessions / concurrency) * 3 * ((retries + 1) * timeout + backoffs)  # three calls a session
    with tempfile.TemporaryDirectory() as tmp, ChaosServer(replies, at_rates({"hang": 0.05}, seed=13)) as server:
        data = questions(Path(tmp) / "qs.jsonl", sessions)
        start = time.monotonic()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = main(
                ["run", "chaos", "--data", str(data), "--out", str(Path(tmp) / "t.jsonl"), "--json",
                 "--model", f"openai-compatible:chaos@{server.url}", "--timeout", str(timeout),
                 "--max-retries", str(retries), "--concurrency", str(concurrency)]
            )  # fmt: skip
        wall = time.monotonic() - start
    return {
        "scenario": "hangs",
        "wall_s": round(wall, 2),
        "bound_s": bound,
        "requests": len(server.log),
        "hangs": server.faults().get("hang", 0),
        "exit": code,
    }


async def _once(url: str, tmp: Path) -> dict[str, str]:
    from tests.chaos.protocol import Chaos, Question
    from voirdire.models import RoleSettings
    from voirdire.runner import run_protocol

    result = await run_protocol(
        Chaos(),
        [Question(id="q", question="Capital?")],
        out=tmp / "t.jsonl",
        roles={"*": RoleSettings(model=f"openai-compatible:chaos@{url}")},
    )
    return result.errors


def retry_after() -> dict[str, Any]:
    """The gaps between the requests the server sees after it asks for ``Retry-After: 1`` twice, and after an HTTP
    date 2 s ahead (whole seconds: 1 to 2 s away when the client reads it)."""
    from tests.chaos.protocol import replies
    from tests.chaos.server import ChaosServer, in_order

    def gaps(server: Any) -> list[float]:
        return [round(b.time - a.time, 3) for a, b in itertools.pairwise(server.log)]

    with tempfile.TemporaryDirectory() as tmp:
        with ChaosServer(replies, in_order(["429", "429"]), retry_after="1") as seconds:
            asyncio.run(_once(seconds.url, Path(tmp)))
        with ChaosServer(replies, in_order(["429"]), retry_after=lambda: formatdate(time.time() + 2, usegmt=True)) as d:
            asyncio.run(_once(d.url, Path(tmp) / "date"))
    return {"scenario": "retry-after", "seconds_1_gaps_s": gaps(seconds)[:2], "http_date_2s_gap_s": gaps(d)[0]}


def adaptive() -> dict[str, Any]:
    """tests/chaos/test_adaptive.py's run, with the requests under way at the server as each arrives, before the
    first 429, while the limit is cut (from 4 answer times after the cut until it climbs back) and after."""
    from tests.chaos.protocol import Chaos, Question, replies
    from tests.chaos.server import ChaosServer
    from voirdire.models import RoleSettings
    from voirdire.models.limiter import endpoint_limits
    from voirdire.runner import run_protocol

    latency_s, half, burst = 0.04, 8, range(100, 120)
    lock, busy, arrivals = threading.Lock(), [0], []

    def load(messages: list[dict[str, Any]]) -> str:
        with lock:
            busy[0] += 1
            arrivals.append((time.monotonic(), busy[0]))
        time.sleep(latency_s)
        with lock:
            busy[0] -= 1
        return replies(messages)

    limits: list[tuple[float, int]] = []

    async def run(url: str, tmp: Path) -> float:
        async def watch() -> None:
            while True:
                shown = endpoint_limits().get(url)
                if shown is not None:
                    limits.append((time.monotonic(), shown[0]))
                await asyncio.sleep(0.002)

        watcher = asyncio.ensure_future(watch())
        start = time.monotonic()
        try:
            await run_protocol(
                Chaos(),
                [Question(id=f"q{i:02d}", question=f"Capital {i}?") for i in range(80)],
                out=tmp / "t.jsonl",
                roles={"*": RoleSettings(model=f"openai-compatible:chaos@{url}")},
                concurrency=16,
            )
        finally:
            watcher.cancel()
        return time.monotonic() - start

    plan = lambda i, b: "429" if i in burst else "ok"  # noqa: E731
    with tempfile.TemporaryDirectory() as tmp, ChaosServer(load, plan, retry_after="0") as server:
        wall = asyncio.run(run(server.url, Path(tmp)))
    first_429 = min(e.time for e in server.log if e.fault == "429")
    cut = next(t for t, limit in limits if t >= first_429 and limit <= half)
    back = next((t for t, limit in limits if t > cut and limit > half), math.inf)
    held = [n for t, n in arrivals if cut + 4 * latency_s < t < back - 0.01]
    return {
        "scenario": "adaptive",
        "wall_s": round(wall, 2),
        "limit_first_lowest_last": [limits[0][1], min(x for _, x in limits), limits[-1][1]],
        "at_server_before_burst": max(n for t, n in arrivals if t < first_429),
        "at_server_while_cut": max(held, default=0),
        "requests_while_cut": len(held),
        "at_server_after": max((n for t, n in arrivals if t > back), default=0),
    }


SCENARIOS = {"hangs": hangs, "retry-after": retry_after, "adaptive": adaptive}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenario", choices=[*SCENARIOS, "all"])
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args(argv)
    names = list(SCENARIOS) if args.scenario == "all" else [args.scenario]
    for _ in range(args.runs):
        for name in names:
            print(json.dumps(SCENARIOS[name]()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
