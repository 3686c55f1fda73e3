"""Adaptive concurrency: a burst of 429s cuts the requests in flight, which then climb back as the endpoint answers
again, and the run still finishes with every verdict. Asserted on what the endpoint's limit decided, in the order
it decided it (each slot given with the limit and the requests in flight then), never on a clock."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.chaos.protocol import Chaos, Question, replies
from tests.chaos.server import ChaosServer
from voirdire.models import RoleSettings
from voirdire.models.limiter import AdaptiveLimit, Outcome
from voirdire.models.openai import DEFAULT_MAX_CONNECTIONS
from voirdire.runner import run_protocol

SESSIONS, CONCURRENCY = 80, 16  # three calls a session: 240 answered requests
HALF = CONCURRENCY // 2
BURST = range(100, 120)  # the server's requests 100 to 119 get HTTP 429
LATENCY_S = 0.04  # how long the server takes over an answer, so requests overlap there


class Load:
    """Answers like ``replies`` after ``LATENCY_S``; the first answers wait until more than half the sessions'
    requests are at the server at once (or 10 s), so that the run starts with more than half in flight however
    slow the machine."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.busy = 0
        self.opened = threading.Event()

    def __call__(self, messages: list[dict[str, Any]]) -> str:
        with self.lock:
            self.busy += 1
            if self.busy > HALF:
                self.opened.set()
        self.opened.wait(10)
        time.sleep(LATENCY_S)
        with self.lock:
            self.busy -= 1
        return replies(messages)


def burst(index: int, body: dict[str, Any]) -> str:
    return "429" if index in BURST else "ok"


async def test_a_burst_of_429s_cuts_the_requests_in_flight_which_then_recover(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The limit's decisions in the order it made them: ("slot", limit, in flight) as requests are let through (at
    # once, or woken from the queue), ("answer", limit after it, outcome) as a request gives its slot back.
    decisions: list[tuple[str, int, Any]] = []
    acquire, release, wake = AdaptiveLimit.acquire, AdaptiveLimit.release, AdaptiveLimit._wake

    async def slot(self: AdaptiveLimit) -> int:
        at_once = self.down is None and self.in_flight < self.limit and not self._waiters
        ticket = await acquire(self)
        if at_once:  # no wait: nothing ran in between
            decisions.append(("slot", self.limit, self.in_flight))
        return ticket

    def woken(self: AdaptiveLimit) -> None:
        was = self.in_flight
        wake(self)
        if self.in_flight > was:
            decisions.append(("slot", self.limit, self.in_flight))

    def answer(self: AdaptiveLimit, ticket: int, outcome: Outcome, cause: str = "") -> None:
        release(self, ticket, outcome, cause)
        decisions.append(("answer", self.limit, outcome))

    monkeypatch.setattr(AdaptiveLimit, "acquire", slot)
    monkeypatch.setattr(AdaptiveLimit, "release", answer)
    monkeypatch.setattr(AdaptiveLimit, "_wake", woken)
    load = Load()
    with ChaosServer(load, burst, retry_after="0") as server:
        items = [Question(id=f"q{i:02d}", question=f"Capital {i}?") for i in range(SESSIONS)]
        result = await run_protocol(
            Chaos(),
            items,
            out=tmp_path / "t.jsonl",
            roles={"*": RoleSettings(model=f"openai-compatible:chaos@{server.url}")},
            concurrency=CONCURRENCY,
        )
    assert not result.errors and len(result.verdicts) == SESSIONS  # the run finished, every session with a verdict
    assert server.faults() == {"ok": 3 * SESSIONS, "429": len(BURST)}
    # Every 429 retried; ChaosServer's listen backlog (5) can also reset a connection or two while 16 open at once.
    assert result.retries >= len(BURST)
    assert load.opened.is_set()

    first_429 = next(i for i, (kind, _, how) in enumerate(decisions) if kind == "answer" and how is Outcome.OVERLOAD)
    cut = next(i for i, (_, limit, _) in enumerate(decisions) if i >= first_429 and limit <= HALF)
    back = next(i for i, (_, limit, _) in enumerate(decisions) if i > cut and limit > HALF)
    # Requests let through while the limit was cut (none before those in flight at the cut were answered down to
    # the limit): at most half the sessions at once, until the limit climbs back.
    after_cut = [i for i, (kind, *_) in enumerate(decisions[cut:back], cut) if kind == "slot"]
    held = [decisions[i][2] for i in after_cut]
    before = max(n for kind, _, n in decisions[:first_429] if kind == "slot")
    after = max(n for kind, _, n in decisions[back:] if kind == "slot")
    lowest = min(limit for _, limit, _ in decisions)
    print(
        f"\nadaptive: limit {decisions[0][1]} -> {lowest} -> {decisions[-1][1]}; requests in flight: up to {before} "
        f"before the burst, up to {max(held)} while cut ({len(held)} requests), up to {after} after"
    )
    assert decisions[0][1] == DEFAULT_MAX_CONNECTIONS and lowest <= HALF
    # more than half the sessions at once, then at most half while cut, then more again
    assert held and max(held) <= HALF < min(before, after)
