"""Every way an endpoint misbehaves is retried: hangs, 429 and 500 answers, bodies cut off mid-transfer or
mid-JSON, dropped connections, garbage and JSON that is not a chat completion."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.chaos.protocol import Chaos, Question, replies
from tests.chaos.server import ChaosServer, at_rates, in_order
from voirdire.models import RoleSettings
from voirdire.runner import run_protocol
from voirdire.transcript import ModelCall, load

RETRIED = ("hang", "429", "500", "truncated", "cut_json", "drop", "garbage", "wrong_json", "empty")


def roles(url: str, **settings: object) -> dict[str, RoleSettings]:
    return {"*": RoleSettings(model=f"openai-compatible:chaos@{url}", **settings)}  # type: ignore[arg-type]


@pytest.mark.parametrize("fault", RETRIED)
async def test_a_fault_is_retried_and_counted(fault: str, tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    # A deadline only a hang reaches: the other answers come well within it on a busy machine (a bound, not a measure)
    timeout = 5 if fault == "hang" else 60
    with ChaosServer(replies, in_order([fault]), retry_after="0") as server:
        result = await run_protocol(
            Chaos(), [Question(id="q", question="Capital?")], out=out, roles=roles(server.url, timeout=timeout)
        )
    assert not result.errors and result.verdicts["q"].accepted is True
    first = load(out).sessions["q"].of_kind(ModelCall)[0]
    assert first.retries == 1 and first.response == "Paris."
    assert [e.fault for e in server.log] == [fault, "ok", "ok", "ok"]


async def test_a_fault_past_the_retries_is_the_sessions_recorded_error(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    with ChaosServer(replies, in_order(["cut_json", "drop", "empty"])) as server:
        result = await run_protocol(
            Chaos(), [Question(id="q", question="Capital?")], out=out, roles=roles(server.url, max_retries=2)
        )
    (error,) = load(out).sessions["q"].errors
    assert "witness via openai-compatible:chaos@" in error.message
    assert "InvalidReply: HTTP 200 whose body is not a chat completion (no choices)" in error.message
    assert "(after 2 retries)" in error.message and result.errors["q"].startswith("ModelCallError")


async def test_a_permanent_error_is_not_retried(tmp_path: Path) -> None:
    with ChaosServer(replies, in_order(["404"])) as server:
        result = await run_protocol(
            Chaos(),
            [Question(id="q", question="Capital?")],
            out=tmp_path / "t.jsonl",
            roles={"*": RoleSettings(model=f"openai-compatible:chaos@{server.url}/wrong")},
        )
    assert "ModelHTTPError: HTTP 404" in result.errors["q"] and len(server.log) == 1


async def test_thirty_sessions_through_every_fault_at_once(tmp_path: Path) -> None:
    rates = {fault: 0.03 for fault in RETRIED}  # 27 % of requests fail, each kind about equally
    out = tmp_path / "t.jsonl"
    items = [Question(id=f"q{i}", question=f"Capital {i}?") for i in range(30)]
    with ChaosServer(replies, at_rates(rates, seed=5), retry_after="0") as server:
        result = await run_protocol(Chaos(), items, out=out, roles=roles(server.url, timeout=3), concurrency=6)
    seen = server.faults()
    assert len(seen) >= 8, seen  # nearly every kind of fault happened
    t = load(out)
    assert all((s.verdict is None) != (not s.errors) for s in t.sessions.values())
    # a call fails only when four attempts fail other than by a 429 (p < 0.27**4 = 0.5 %): 90 calls lose < 0.5 session
    assert len(result.errors) <= 2, result.errors
    recorded = sum(c.retries for s in t.sessions.values() for c in s.of_kind(ModelCall))
    failed = [e.retries for s in t.sessions.values() for e in s.errors]
    # a failed call retried 3 times for its other failures, and as often as it was asked to wait (429) besides
    assert all(r >= 3 for r in failed) and recorded > 0 and result.retries == recorded + sum(failed)
