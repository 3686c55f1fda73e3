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


def test_mask_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    assert mask_secrets("examiner=openai-compatible:m@http://bob:s3cret@h:8000/v1?api_key=abc") == (
        "examiner=openai-compatible:m@http://h:8000/v1"
    )
    for url in ("http://:s3cret@h/v1", "http://s3cret@h/v1", "https://h/v1?key=s3cret", "https://h/v1?x=1&auth=s3cret"):
        assert "s3cret" not in mask_secrets(f"--model evaluator=openai-compatible:m@{url}")
    assert mask_secrets("token=s3cret and monkey=business") == "token=*** and monkey=business"
    assert mask_secrets("--model examiner=openai:gpt-4o") == "--model examiner=openai:gpt-4o"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-verysecretvalue")
    assert mask_secrets("Error: bad key sk-verysecretvalue") == "Error: bad key ***"


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
    assert roles["examinee"].create_args() == {"max_tokens": 64, "temperature": 0.0}  # greedy is sent, not assumed
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


def test_per_call_seed_is_mixed_with_the_role_seed() -> None:
    from voirdire.models import RoleSettings

    assert RoleSettings().create_args(temperature=0.7, seed=5) == {"max_tokens": 256, "temperature": 0.7, "seed": 5}
    seeded = RoleSettings(seed=7)
    assert seeded.create_args()["seed"] == 7
    draws = {seeded.create_args(seed=k)["seed"] for k in range(3)}
    assert len(draws) == 3 and 7 not in draws  # distinct per call, and --seed changes them
    assert RoleSettings(seed=8).create_args(seed=0)["seed"] != seeded.create_args(seed=0)["seed"]


def test_a_missing_or_broken_gguf_file_is_a_clear_error(tmp_path: Path) -> None:
    from voirdire.models import build_client

    with pytest.raises(ModelSpecError, match="no such GGUF model file"):
        build_client(parse_spec(f"local:{tmp_path / 'nope.gguf'}"))
    if importlib.util.find_spec("llama_cpp") is not None:
        bad = tmp_path / "bad.gguf"
        bad.write_bytes(b"not a model")
        with pytest.raises(ModelSpecError, match="cannot load"):
            build_client(parse_spec(f"local:{bad}"))
