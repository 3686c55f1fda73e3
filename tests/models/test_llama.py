"""Local GGUF models on llama.cpp, and the embedded default model."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from autogen_core.models import UserMessage

from voirdire.models import ModelSpecError, build_client, parse_spec


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="needs the [local] extra")
async def test_embedded_model_answers_offline_within_max_tokens() -> None:
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


def test_a_missing_or_broken_gguf_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ModelSpecError, match="no such GGUF model file"):
        build_client(parse_spec(f"local:{tmp_path / 'nope.gguf'}"))
    if importlib.util.find_spec("llama_cpp") is not None:
        bad = tmp_path / "bad.gguf"
        bad.write_bytes(b"not a model")
        with pytest.raises(ModelSpecError, match="cannot load"):
            build_client(parse_spec(f"local:{bad}"))


def test_the_json_grammar_keeps_control_characters_out_of_strings() -> None:
    pytest.importorskip("llama_cpp")
    from voirdire.models.llama import json_gbnf

    gbnf = json_gbnf('{"type": "object", "properties": {"s": {"type": "string"}}, "required": ["s"]}')
    assert 'char ::= [^"\\\\\\x00-\\x1F]' in gbnf
