"""Scripted clients: rules, then replies in order, then a clear error."""

from __future__ import annotations

from pathlib import Path

import pytest
from autogen_core.models import UserMessage

from voirdire.models import (
    ModelSpecError,
    Script,
    ScriptedChatCompletionClient,
    ScriptExhausted,
    ScriptRule,
    build_client,
    parse_spec,
)


async def test_scripted_rules_then_sequence_then_exhaustion() -> None:
    client = ScriptedChatCompletionClient(
        Script(
            rules=[ScriptRule(match="hello", reply="hi"), ScriptRule(match="count", replies=["1", "2"])],
            replies=["first", "second"],
        )
    )

    async def say(text: str) -> str:
        return str((await client.create([UserMessage(content=text, source="t")])).content)

    assert [await say("hello"), await say("count"), await say("count"), await say("x"), await say("y")] == [
        "hi",
        "1",
        "2",
        "first",
        "second",
    ]
    with pytest.raises(ScriptExhausted):
        await say("count")
    with pytest.raises(ScriptExhausted):
        await say("z")
    assert client.total_usage().completion_tokens == 5


async def test_a_scripted_spec_builds_a_client_from_its_file(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    script.write_text("- one\n- two\n")
    client = build_client(parse_spec(f"scripted:{script}"))
    assert isinstance(client, ScriptedChatCompletionClient)
    assert (await client.create([UserMessage(content="?", source="t")])).content == "one"
    with pytest.raises(ModelSpecError, match="script file not found"):
        build_client(parse_spec(f"scripted:{tmp_path / 'nope.yaml'}"))


async def test_a_rule_whose_regex_backtracks_without_end_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from voirdire.models import scripted

    monkeypatch.setattr(scripted, "MATCH_TIMEOUT_S", 0.2)
    path = tmp_path / "s.yaml"
    # (a+)+$ on forty a's hung re for ever; the regex package answers it at once, and times out on (a|aa)+$
    path.write_text("rules:\n  - match: '(a+)+$'\n    reply: one\n  - match: '(a|aa)+$'\n    reply: two\n")
    client = ScriptedChatCompletionClient.from_file(path)
    reply = await client.create([UserMessage(content="a" * 40, source="t")])
    assert reply.content == "one"
    with pytest.raises(scripted.ScriptTimeout, match=r"s\.yaml: rule 2's match '\(a\|aa\)\+\$' took more than 0\.2 s"):
        await client.create([UserMessage(content="a" * 60 + "!", source="t")])
