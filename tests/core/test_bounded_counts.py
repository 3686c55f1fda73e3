"""Numbers from outside stay bounded: token counts that pass one by one but add up past the limit end a session
with one clear line (never a validation dump), and the run goes on."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from autogen_core.models import CreateResult
from autogen_ext.models.replay import ReplayChatCompletionClient

from tests.chaos.conftest import chaos_cli  # noqa: F401  (a fixture)
from voirdire.api import run
from voirdire.base.limits import TOKEN_COUNT_MAX
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


def _forged(tmp_path: Any, field: str, value: int) -> Any:
    """A real chaos transcript with one model call's ``field`` set to ``value``."""
    import json

    items = [{"id": f"q{i}", "question": f"Capital {i}?"} for i in range(2)]
    out = tmp_path / "t.jsonl"
    run("chaos", items, out=out, clients={"witness": ReplayChatCompletionClient(["correct"] * 10),
                                          "judge": ReplayChatCompletionClient(["correct"] * 10)})  # fmt: skip
    lines = out.read_text().splitlines()
    at = next(k for k, line in enumerate(lines) if '"kind":"model_call"' in line)
    rec = json.loads(lines[at])
    rec[field] = value
    lines[at] = json.dumps(rec)
    out.write_text("\n".join(lines) + "\n")
    return out, at + 1


@pytest.mark.parametrize(
    ("field", "value"), [("requests", -28_000_000), ("retries", -5), ("requests", 10**12), ("samples", -1)]
)
def test_request_and_retry_counts_out_of_bounds_are_refused_naming_the_line(
    chaos_cli: None, tmp_path: Any, capsys: pytest.CaptureFixture[str], field: str, value: int  # noqa: F811
) -> None:
    from voirdire.cli import main

    out, line = _forged(tmp_path, field, value)
    assert main(["report", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"t.jsonl:{line}: not a transcript record (model_call.{field}:" in err
    assert "-28,000,000" not in err and "28000000 requests" not in err


@pytest.mark.parametrize(("field", "value"), [("requests", -28_000_000), ("retries", -5), ("requests", 10**12)])
def test_the_viewer_counts_no_request_or_retry_count_out_of_bounds(
    chaos_cli: None, tmp_path: Any, field: str, value: int  # noqa: F811
) -> None:
    from voirdire.web.index import TranscriptIndex

    out, line = _forged(tmp_path, field, value)
    index = TranscriptIndex(out, persist=False)
    index.refresh()
    assert any(f"t.jsonl:{line}:" in p for p in index.problems), index.problems
    for a in index.sessions():
        assert 0 <= a.retries < 100 and all(0 <= m.requests < 100 for m in a.models.values())
