"""Numbers from outside stay bounded: token counts that pass one by one but add up past the limit end a session
with one clear line (never a validation dump), and the run goes on."""

from __future__ import annotations

import dataclasses
from typing import Any

from autogen_core.models import CreateResult
from autogen_ext.models.replay import ReplayChatCompletionClient

from tests.chaos.conftest import chaos_cli  # noqa: F401  (a fixture)
from voirdire.api import run
from voirdire.limits import TOKEN_COUNT_MAX
from voirdire.transcript import ErrorEvent, load


class Greedy(ReplayChatCompletionClient):
    """Replies "correct" with a prompt count past the limit for the call: what the counts of one call's requests
    add up to when each is within it (one request per sample, against a server that ignores ``n``), and what a
    client given in code may report, which no transport checked."""

    async def create(self, messages: Any, **kwargs: Any) -> CreateResult:  # type: ignore[override]
        result = await super().create(messages, **kwargs)
        big = 2 * (TOKEN_COUNT_MAX // 2 + 1)
        usage = dataclasses.replace(result.usage, prompt_tokens=big)
        return result.model_copy(update={"usage": usage, "content": "correct"})


def test_token_counts_summing_past_the_limit_are_one_clear_session_error(chaos_cli: None, tmp_path: Any) -> None:  # noqa: F811
    items = [{"id": f"q{i}", "question": f"Capital {i}?"} for i in range(3)]
    clients = {"witness": Greedy(["correct"] * 100), "judge": Greedy(["correct"] * 100)}
    out = tmp_path / "t.jsonl"
    result = run("chaos", items, out=out, clients=clients)
    assert len(result.errors) == 3, result
    for message in result.errors.values():
        assert "\n" not in message and "validation error" not in message.lower() and "pydantic" not in message
        assert "1,000,000,000" in message and "tokens" in message
    errors = [e for s in load(out).sessions.values() for e in s.of_kind(ErrorEvent)]
    assert len(errors) == 3 and all("\n" not in e.message for e in errors)
