"""A 429 or 503 is the server asking to wait, not a failure: such answers are retried for as long as the call may
wait for them in all (``RATE_LIMIT_WAIT_S``) and its session's budget allows, however many attempts that takes;
``max_retries`` counts the other transient failures only. A server that refuses for ever ends the call with one
bounded, clear error naming the cause. Asserted on the attempts the server saw and the waits the client chose,
never on a clock."""

from __future__ import annotations

from pathlib import Path

import pytest
from tenacity import RetryCallState

from tests.chaos.protocol import Chaos, Question, replies
from tests.chaos.server import ChaosServer, in_order
from voirdire.agents import model_agent
from voirdire.agents.model_agent import ModelAgent
from voirdire.models import RoleSettings
from voirdire.models.base import http_error
from voirdire.runner import run_protocol
from voirdire.transcript import ModelCall, load

JITTER_S = 0.5  # ModelAgent's backoff base: the most jitter added to a server's wait


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The wait the client chose before each retry (what tenacity then sleeps)."""
    chosen: list[float] = []
    before_sleep = ModelAgent._before_sleep

    def noted(self: ModelAgent, state: RetryCallState) -> None:
        if state.next_action is not None:
            chosen.append(state.next_action.sleep)
        before_sleep(self, state)

    monkeypatch.setattr(ModelAgent, "_before_sleep", noted)
    return chosen


def roles(url: str, **settings: object) -> dict[str, RoleSettings]:
    return {"*": RoleSettings(model=f"openai-compatible:chaos@{url}", **settings)}  # type: ignore[arg-type]


async def test_five_429s_then_an_answer_is_a_success_past_max_retries(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    with ChaosServer(replies, in_order(["429"] * 5), retry_after="0") as server:
        result = await run_protocol(
            Chaos(), [Question(id="q", question="Capital?")], out=out, roles=roles(server.url, max_retries=3)
        )
    assert not result.errors and result.verdicts["q"].accepted is True
    first = load(out).sessions["q"].of_kind(ModelCall)[0]
    assert first.retries == 5 and first.response == "Paris."
    assert [e.fault for e in server.log] == ["429"] * 5 + ["ok"] * 3


async def test_429s_count_apart_from_other_failures(tmp_path: Path) -> None:
    # max_retries = 1 still allows one other failure among any number of 429s; a second one ends the call.
    plan = in_order(["429", "500", "429", "429", "drop"])
    with ChaosServer(replies, plan, retry_after="0") as server:
        result = await run_protocol(
            Chaos(), [Question(id="q", question="Capital?")], out=tmp_path / "t.jsonl",
            roles=roles(server.url, max_retries=1),
        )  # fmt: skip
    assert len(server.log) == 5
    assert "ModelConnectionError" in result.errors["q"] and "(after 4 retries)" in result.errors["q"]
    assert "max_retries = 1: 2 failures other than a rate limit" in result.errors["q"]


async def test_a_server_refusing_for_ever_is_a_bounded_clear_failure(
    tmp_path: Path, waits: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(model_agent, "RATE_LIMIT_WAIT_S", 2.0)
    with ChaosServer(replies, lambda index, body: "429", retry_after="0.1") as server:
        result = await run_protocol(
            Chaos(), [Question(id="q", question="Capital?")], out=tmp_path / "t.jsonl",
            roles=roles(server.url, max_retries=1),
        )  # fmt: skip
    error = result.errors["q"]
    # each wait is the server's 0.1 s plus up to 0.5 s of jitter; they stop before their sum passes 2 s
    assert len(server.log) == len(waits) + 1 and sum(waits) <= 2.0
    assert all(0.1 <= w <= 0.1 + JITTER_S for w in waits) and 3 <= len(waits) <= 20
    assert error.startswith("ModelCallError: witness via openai-compatible:chaos@") and "HTTP 429" in error
    assert f"refused {len(server.log)} attempts with HTTP 429/503" in error
    assert "the most a call waits for a rate limit (2 s)" in error


async def test_the_sessions_budget_ends_a_wait_for_a_rate_limit(tmp_path: Path) -> None:
    with ChaosServer(replies, lambda index, body: "429", retry_after="0.2") as server:
        result = await run_protocol(
            Chaos(), [Question(id="q", question="Capital?")], out=tmp_path / "t.jsonl",
            roles=roles(server.url, max_retries=1), session_timeout=3,
        )  # fmt: skip
    assert result.errors["q"].startswith("SessionTimeout"), result.errors
    assert len(server.log) >= 2  # refused more often than max_retries allows for other failures


@pytest.mark.parametrize(("status", "code", "waits_for_it"), [
    (429, None, True), (503, None, True), (529, None, True), (429, "insufficient_quota", False),
    (500, None, False), (408, None, False),
])  # fmt: skip
def test_which_answers_ask_to_wait(status: int, code: str | None, waits_for_it: bool) -> None:
    from voirdire.models.base import asks_to_wait

    assert asks_to_wait(http_error(status, "x", code=code, headers={})) is waits_for_it
    assert asks_to_wait(TimeoutError()) is False
