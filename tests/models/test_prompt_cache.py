"""Provider prompt caching: Anthropic's cache_control breakpoints on a request's stable prefix when it is long
enough, the cache's reads and writes read apart from uncached input (Anthropic's usage, OpenAI's cached_tokens),
recorded per call and priced at their own rates; ``--no-prompt-cache`` sends no breakpoint."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from autogen_core.models import AssistantMessage, SystemMessage, UserMessage

from tests.models.fake_providers import FakeAnthropic
from voirdire.cli import main
from voirdire.models import RoleSettings
from voirdire.models.anthropic import AnthropicClient, cache_minimum
from voirdire.models.base import InvalidReply
from voirdire.models.openai import _read_completion
from voirdire.transcript import ModelCall, load

KEY = "sk-ant-test-0123456789abcdef"
LONG = "The reference text. " * 400  # 8,000 characters: about 2,000 tokens at four characters a token


def body_of(messages: list[Any], model: str = "claude-sonnet-4-5", **args: Any) -> dict[str, Any]:
    client = AnthropicClient(model, api_key=KEY, base="http://127.0.0.1:9")
    return client._body(messages, {"max_tokens": 16, **args}, False, 0)


def marks(body: dict[str, Any]) -> list[str]:
    """Where the breakpoints are: 'system', or the index of the turn."""
    found = []
    system = body.get("system")
    if isinstance(system, list) and any("cache_control" in b for b in system):
        found.append("system")
    for i, turn in enumerate(body["messages"]):
        if isinstance(turn["content"], list) and any("cache_control" in b for b in turn["content"]):
            found.append(str(i))
    return found


def test_breakpoints_go_on_a_long_enough_stable_prefix_only() -> None:
    conversation = [
        SystemMessage(content=LONG),
        UserMessage(content="First question?", source="u"),
        AssistantMessage(content="First answer.", source="a"),
        UserMessage(content="Newest question?", source="u"),
    ]
    body = body_of(conversation)
    # The system text alone is past Sonnet's 1,024 tokens; the turn before the newest ends the stable prefix.
    assert marks(body) == ["system", "1"]
    assert body["messages"][-1]["content"] == "Newest question?"  # the newest turn is never marked
    assert body["messages"][1]["content"][0]["text"] == "First answer."
    # Haiku 4.5 caches from 4,096 tokens: the same prefix is too short to mark.
    assert cache_minimum("claude-haiku-4-5") == 4096 and marks(body_of(conversation, "claude-haiku-4-5")) == []
    short = [SystemMessage(content="Judge."), UserMessage(content="Is it?", source="u")]
    assert marks(body_of(short)) == [] and body_of(short)["system"] == "Judge."  # as before: plain text
    assert marks(body_of(conversation, prompt_cache=False)) == []  # --no-prompt-cache


def test_the_role_setting_sends_the_switch_only_when_off() -> None:
    assert "prompt_cache" not in RoleSettings().create_args()  # requests digest as they did
    assert RoleSettings(prompt_cache=False).create_args()["prompt_cache"] is False


def test_anthropic_usage_is_split_into_uncached_read_and_written() -> None:
    client = AnthropicClient("claude-sonnet-4-5", api_key=KEY, base="http://127.0.0.1:9")
    reply = client._read(
        {
            "content": [{"type": "text", "text": "ok"}],
            "usage": {
                "input_tokens": 50,
                "cache_creation_input_tokens": 2000,
                "cache_read_input_tokens": 300,
                "output_tokens": 4,
            },
        }
    )
    assert (reply.prompt_tokens, reply.cache_read, reply.cache_write, reply.completion_tokens) == (2350, 300, 2000, 4)


def test_openai_cached_tokens_are_read() -> None:
    def completion(usage: dict[str, Any]) -> dict[str, Any]:
        return {"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}], "usage": usage}

    reply = _read_completion(completion({"prompt_tokens": 2048, "completion_tokens": 3,
                                         "prompt_tokens_details": {"cached_tokens": 1920}}))  # fmt: skip
    assert (reply.prompt_tokens, reply.cache_read, reply.cache_write) == (2048, 1920, 0)
    assert _read_completion(completion({"prompt_tokens": 5, "completion_tokens": 1})).cache_read == 0
    with pytest.raises(InvalidReply, match="cached_tokens"):
        _read_completion(completion({"prompt_tokens": 5, "completion_tokens": 1,
                                     "prompt_tokens_details": {"cached_tokens": -3}}))  # fmt: skip


class CachingAnthropic(FakeAnthropic):
    """Anthropic's breakpoint rule, at four characters a token: a marked prefix of at least the minimum is cached;
    a later request reads the longest cached prefix of its own marked prefix and writes the rest of it; what
    follows the breakpoint is uncached input."""

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        status, reply = super().answer(path, _plain(body))
        if status != 200:
            return status, reply
        blocks = ([("system", body["system"])] if "system" in body else []) + [
            (t["role"], t["content"]) for t in body["messages"]
        ]
        total, prefix, marked = 0, "", None
        for _, content in blocks:
            parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
            for part in parts:
                prefix += part["text"]
                if "cache_control" in part:
                    marked = prefix
        total = len(prefix) // 4
        seen = self.__dict__.setdefault("seen", set())
        read = write = 0
        if marked is not None and len(marked) // 4 >= 1024:
            # The longest prefix cached before is read; what the breakpoint adds to it is written.
            hit = max((p for p in seen if marked.startswith(p)), key=len, default="")
            read, write = len(hit) // 4, len(marked) // 4 - len(hit) // 4
            seen.add(marked)
        out = reply["usage"]["output_tokens"]
        reply["usage"] = {
            "input_tokens": total - read - write,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": write,
            "output_tokens": out,
        }
        return 200, reply


def _plain(body: dict[str, Any]) -> dict[str, Any]:
    """The body with its blocks as text, as the plain fake reads it."""
    out = dict(body)
    if isinstance(out.get("system"), list):
        out["system"] = "".join(b["text"] for b in out["system"])
    out["messages"] = [
        {**t, "content": "".join(b["text"] for b in t["content"]) if isinstance(t["content"], list) else t["content"]}
        for t in out["messages"]
    ]
    return out


def examiner_reply(messages: list[dict[str, Any]]) -> str:
    last = messages[-1]["content"]
    if "follow-up questions" in last:
        return "No"
    if "correct or incorrect" in last:
        return "The claim is correct."
    return "1. Where is it?"


@pytest.mark.parametrize("cache", [True, False])
def test_an_examination_records_the_caches_tokens_and_the_report_prices_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], cache: bool
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    claim = "The reference says: " + LONG + " So the tower is in Paris."  # a long claim: every prompt repeats it
    out = tmp_path / "t.jsonl"
    with CachingAnthropic(examiner_reply) as claude:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", claude.url)
        args = ["examine", claim, "--model", "anthropic:claude-sonnet-4-5", "--out", str(out), "--json"]
        assert main([*args, *([] if cache else ["--no-prompt-cache"])]) == 0, capsys.readouterr().err
        sent = [r.body for r in claude.requests]
    calls = [c for s in load(out).sessions.values() for c in s.of_kind(ModelCall)]
    read = sum(c.usage.cache_read_tokens for c in calls)
    write = sum(c.usage.cache_write_tokens for c in calls)
    assert any(marks(b) for b in sent) is cache
    assert (read > 0 and write > 0) is cache
    capsys.readouterr()
    assert main(["report", str(out), "--json"]) == 0
    total = json.loads(capsys.readouterr().out)["total_usage"]
    assert (total["cache_read_tokens"], total["cache_write_tokens"]) == (read, write)
    prompt, completion = total["prompt_tokens"], total["completion_tokens"]
    uncached = (prompt * 3.0 + completion * 15.0) / 1e6  # the packaged Sonnet 4.5 rates
    billed = ((prompt - read - write) * 3.0 + read * 0.3 + write * 3.75 + completion * 15.0) / 1e6
    assert total["uncached_cost_usd"] == pytest.approx(uncached) and total["cost_usd"] == pytest.approx(billed)
    if cache:
        assert billed < uncached
        assert main(["report", str(out)]) == 0
        text = capsys.readouterr().out
        assert f"prompt cache: {read:,} prompt tokens read from the provider's cache, {write:,} written" in text
        assert "cost without the prompt cache" in text
