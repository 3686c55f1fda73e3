"""Adaptive concurrency: a burst of 429s cuts the requests in flight at the server, which then climb back as the
endpoint answers again, and the run still finishes with every verdict."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

from tests.chaos.protocol import Chaos, Question, replies
from tests.chaos.server import ChaosServer
from voirdire.models import RoleSettings
from voirdire.models.limiter import endpoint_limits
from voirdire.models.openai import DEFAULT_MAX_CONNECTIONS
from voirdire.runner import run_protocol

SESSIONS, CONCURRENCY = 80, 16  # three calls a session: 240 answered requests
BURST = range(100, 120)  # the server's requests 100 to 119 get HTTP 429
LATENCY_S = 0.04  # how long the server takes over an answer, so requests overlap there


class Load:
    """Answers like ``replies`` after ``LATENCY_S``; notes how many answers were under way as each one began."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.busy = 0
        self.arrivals: list[tuple[float, int]] = []  # (monotonic time, answers under way including this one)

    def __call__(self, messages: list[dict[str, Any]]) -> str:
        with self.lock:
            self.busy += 1
            self.arrivals.append((time.monotonic(), self.busy))
        time.sleep(LATENCY_S)
        with self.lock:
            self.busy -= 1
        return replies(messages)


def burst(index: int, body: dict[str, Any]) -> str:
    return "429" if index in BURST else "ok"


async def test_a_burst_of_429s_cuts_the_requests_in_flight_which_then_recover(tmp_path: Path) -> None:
    load = Load()
    limits: list[tuple[float, int]] = []  # (monotonic time, the endpoint's limit) as the run goes
    with ChaosServer(load, burst, retry_after="0") as server:

        async def watch() -> None:
            while True:
                shown = endpoint_limits().get(server.url)
                if shown is not None:
                    limits.append((time.monotonic(), shown[0]))
                await asyncio.sleep(0.002)

        watcher = asyncio.ensure_future(watch())
        items = [Question(id=f"q{i:02d}", question=f"Capital {i}?") for i in range(SESSIONS)]
        try:
            result = await run_protocol(
                Chaos(),
                items,
                out=tmp_path / "t.jsonl",
                roles={"*": RoleSettings(model=f"openai-compatible:chaos@{server.url}")},
                concurrency=CONCURRENCY,
            )
        finally:
            watcher.cancel()
    assert not result.errors and len(result.verdicts) == SESSIONS  # the run finished, every session with a verdict
    assert server.faults() == {"ok": 3 * SESSIONS, "429": len(BURST)}
    # Every 429 retried; ChaosServer's listen backlog (5) can also reset a connection or two while 16 open at once.
    assert result.retries >= len(BURST)

    first_429 = min(e.time for e in server.log if e.fault == "429")
    cut = next(t for t, limit in limits if t >= first_429 and limit <= CONCURRENCY // 2)
    lowest = min(limit for _, limit in limits)
    back = next(t for t, limit in limits if t > cut and limit > CONCURRENCY // 2)
    before = max(busy for t, busy in load.arrivals if t < first_429)
    # after the cut (once the requests sent before it have been answered) until the limit climbs back
    held = [busy for t, busy in load.arrivals if cut + 4 * LATENCY_S < t < back - 0.01]
    after = max(busy for t, busy in load.arrivals if t > back)
    print(
        f"\nadaptive: limit {limits[0][1]} -> {lowest} -> {limits[-1][1]}; answers under way at the server: "
        f"up to {before} before the burst, up to {max(held)} while cut ({len(held)} requests), up to {after} after"
    )
    assert limits[0][1] == DEFAULT_MAX_CONNECTIONS and lowest <= CONCURRENCY // 2
    # more than half the sessions at once at the server, then at most half while cut, then more again
    assert held and max(held) <= CONCURRENCY // 2 < min(before, after)
