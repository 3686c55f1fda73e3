"""Model specs, secrets, role configs, scripted clients and the embedded model."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from autogen_core.models import UserMessage

from voirdire.models import (
    ModelSpecError,
    Script,
    ScriptedChatCompletionClient,
    ScriptExhausted,
    ScriptRule,
    load_role_config,
    mask_secrets,
    parse_spec,
)


def test_specs_parse_and_print_without_secrets() -> None:
    assert parse_spec("local").kind == "local" and parse_spec("local:/m/x.gguf").path == "/m/x.gguf"
    assert parse_spec("openai:gpt-4o-mini").model == "gpt-4o-mini"
    s = parse_spec("openai-compatible:meta/llama-3@http://u:pw@10.0.0.1:8000/v1?key=1")
    assert (s.model, s.base_url) == ("meta/llama-3", "http://u:pw@10.0.0.1:8000/v1?key=1")
    assert s.text == "openai-compatible:meta/llama-3@http://10.0.0.1:8000/v1"
    assert parse_spec("scripted:a.yaml").path == "a.yaml" and parse_spec("human").kind == "human"
    for bad in ("gpt-4", "openai:", "openai-compatible:model", "openai-compatible:m@ftp://x"):
        with pytest.raises(ModelSpecError):
            parse_spec(bad)


def test_mask_secrets() -> None:
    assert mask_secrets("http://bob:s3cret@h/v1?api_key=abc&x=1") == "http://bob:***@h/v1?api_key=***&x=1"
    assert mask_secrets("--model examiner=openai:gpt-4o") == "--model examiner=openai:gpt-4o"


def test_openai_spec_needs_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from voirdire.models import build_client

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelSpecError, match="OPENAI_API_KEY"):
        build_client(parse_spec("openai:gpt-4o-mini"))


def test_role_config(tmp_path: Path) -> None:
    cfg = tmp_path / "run.toml"
    cfg.write_text('[roles.examiner]\nmodel = "openai:gpt-4o"\ntemperature = 0.7\n[roles.examinee]\nmax_tokens = 64\n')
    roles = load_role_config(cfg)
    assert roles["examiner"].create_args() == {"max_tokens": 256, "temperature": 0.7}
    assert roles["examinee"].model == "local" and roles["examinee"].max_tokens == 64
    cfg.write_text('[roles.examiner]\nmodel = "nope"\n')
    with pytest.raises(ModelSpecError, match=r"run\.toml: \[roles\.examiner\]"):
        load_role_config(cfg)
    cfg.write_text("[roles\n")
    with pytest.raises(ModelSpecError, match="invalid TOML"):
        load_role_config(cfg)


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


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="needs the [local] extra")
async def test_embedded_model_answers_offline_within_max_tokens() -> None:
    from voirdire.models import build_client

    client = build_client(parse_spec("local"))
    result = await client.create(
        [UserMessage(content="Say hello.", source="t")], extra_create_args={"max_tokens": 8, "seed": 1}
    )
    assert isinstance(result.content, str) and result.content
    assert 0 < result.usage.completion_tokens <= 8
    again = await client.create(
        [UserMessage(content="Say hello.", source="t")], extra_create_args={"max_tokens": 8, "seed": 1}
    )
    assert again.content == result.content  # greedy by default: the same prompt gives the same reply
