"""The speed benchmark's fake endpoint and its bare raw-SDK driver, on 127.0.0.1 only (docs/performance.md)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from bench.speed.drivers import raw
from bench.speed.drivers.common import read_claims, run_sessions
from bench.speed.examination import Params, Shape, bound_s
from bench.speed.fake_server import ANSWER_MARK, FOLLOWUP_ASK_MARK, bound_port, reply_text, serve
from bench.speed.harness import Traffic


def _claims(tmp_path: Path, n: int) -> Path:
    path = tmp_path / "claims.jsonl"
    claims = [{"id": f"claim-{i}", "claim": f"Claim number {i}: the capital of C{i} is K{i}."} for i in range(n)]
    lines = [json.dumps(c) for c in claims]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("followups", "examinations", "answers"),
    [(0, 1, "in_turn"), (1, 1, "independent"), (0, 3, "in_turn")],
)
async def test_raw_driver_against_the_fake_endpoint(
    tmp_path: Path, followups: int, examinations: int, answers: str
) -> None:
    server, state = await serve(0.001, followups)
    try:
        keepalive = 10 if answers == "independent" else 0  # the raw-tuned driver's pool, once
        args = argparse.Namespace(base_url=f"http://127.0.0.1:{bound_port(server)}/v1", keepalive=keepalive)
        call, close = raw.make_call(args)
        p = Params(examinations=examinations, answers=answers)
        try:
            tally = await run_sessions(call, read_claims(_claims(tmp_path, 5), None), 3, p)
        finally:
            await close()
    finally:
        server.close()
        await server.wait_closed()

    assert (tally.verdicts, tally.accepted, tally.errors) == (5, 5, 0)
    rows = [r.row() for r in state.records()]
    traffic = Traffic.of(rows)
    shape = Shape(followups=followups, examinations=examinations)
    assert traffic.requests == 5 * shape.requests_per_session()
    assert traffic.sessions == 5
    assert traffic.kinds["setup"] == traffic.kinds["decision"] == 5 * examinations
    assert traffic.kinds.get("followup_questions", 0) == 5 * examinations * followups
    assert traffic.kinds["followup_ask"] == 5 * examinations * (followups + 1)
    assert all(r[1] >= r[0] for r in rows)
    # Majority's greedy examinations repeat each other's requests; a single examination repeats none.
    assert traffic.identical == 5 * (examinations - 1) * shape.calls_per_examination()
    assert traffic.max_in_flight <= 3 * shape.in_flight(p)
    # No more connections than requests the driver lets be in flight at once (what the server sees overlap is a
    # matter of timing on a busy machine, not a bound).
    assert 1 <= state.connections["default"] <= 3 * shape.in_flight(p)


def test_replies_follow_the_conversation() -> None:
    ask = {"role": "user", "content": f"1. Yes.\n2. No.\n\n{FOLLOWUP_ASK_MARK}"}
    assert reply_text([ask], followups=1) == ("Yes.", "followup_ask")
    assert reply_text([ask, {"role": "assistant", "content": "Yes."}, ask], followups=1) == ("No.", "followup_ask")
    assert reply_text([{"role": "user", "content": f"{ANSWER_MARK}\nWhy?"}], followups=0)[1] == "answer"


def test_critical_path_bound() -> None:
    one = Shape()
    assert (one.critical_path(), one.critical_path(chained_answers=True), one.requests_per_session()) == (4, 5, 5)
    majority = Shape(examinations=3, followups=1)
    assert majority.critical_path() == 7 and majority.requests_per_session() == 27
    assert majority.run_path(Params(examinations=3, concurrent_examinations=False)) == 3 * 9
    assert bound_s(1000, 200, 4, 0.1) == pytest.approx(2.0)
    assert bound_s(1001, 200, 4, 0.1) == pytest.approx(2.4)


@pytest.mark.parametrize("client", ["instant", "sleep", "http"])
def test_the_in_process_measure_runs_with_each_client(client: str) -> None:
    """``bench.speed.above``'s child: LMvLM's sessions run in-process to the end with each client (scenario b: five
    calls a session), and a CPU figure per call comes back."""
    from bench.speed.above import run_version
    from bench.speed.harness import REPO, FakeEndpoint

    endpoint = FakeEndpoint(5, 0) if client == "http" else None
    try:
        if endpoint is not None:
            endpoint.phase("above")
        done = run_version(
            REPO, 4, 2, latency_s=0.005 if client == "sleep" else 0.0,
            base_url=endpoint.base_url if endpoint else None,
        )  # fmt: skip
        if endpoint is not None:  # warm-up (the first 50 items: all 4 here) and two runs, all through the endpoint
            assert endpoint.traffic("above").requests == 3 * 4 * 5
    finally:
        if endpoint is not None:
            endpoint.close()
    assert done["calls"] == 4 * 5
    assert done["ms_per_call"] > 0 and done["first"] > 0
    assert done["live_report_us_per_call"] == 0  # nothing observes the run's transcript unless asked


def test_the_in_process_measure_folds_the_live_report_when_asked() -> None:
    """``--live-report``: the run's transcript is observed by a ``LiveReport`` (as ``voirdire examine``'s is), which
    folds every record without missing one (else the child stops), and its own time comes back."""
    from bench.speed.above import run_version
    from bench.speed.harness import REPO

    done = run_version(REPO, 4, 2, live_report=True)
    assert done["calls"] == 4 * 5
    assert done["live_report_us_per_call"] > 0
