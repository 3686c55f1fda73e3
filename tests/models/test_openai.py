"""OpenAI and OpenAI-compatible specs build voirdire's OpenAI client (no network needed to build one)."""

from __future__ import annotations

import pytest

from voirdire.models import ModelSpecError, build_client, parse_spec


def test_openai_spec_needs_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelSpecError, match="OPENAI_API_KEY"):
        build_client(parse_spec("openai:gpt-4o-mini"))


def test_an_openai_compatible_spec_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from voirdire.models.openai import OpenAIChatClient

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    client = build_client(parse_spec("openai-compatible:llama3@http://127.0.0.1:9/v1"))
    assert isinstance(client, OpenAIChatClient)
