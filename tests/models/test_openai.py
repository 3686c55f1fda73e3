"""OpenAI and OpenAI-compatible specs build voirdire's OpenAI client: which key goes where, request deadlines, and
replies that are HTTP 200 but not a chat completion (no network beyond 127.0.0.1)."""

from __future__ import annotations

import pytest
from autogen_core.models import UserMessage

from tests.chaos.server import ChaosServer, in_order
from voirdire.agents.model_agent import is_transient
from voirdire.base.secrets import mask_secrets
from voirdire.models import InvalidReply, ModelSpecError, ReplyTimeout, build_client, parse_spec
from voirdire.models.openai import NO_KEY, OpenAIChatClient

OPENAI_KEY = "sk-openai-only-1234567890"


def key_of(client: object) -> str:
    """The key the client sends (its Authorization header)."""
    assert isinstance(client, OpenAIChatClient)
    return client._headers["Authorization"].removeprefix("Bearer ")


def test_openai_spec_needs_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelSpecError, match="OPENAI_API_KEY"):
        build_client(parse_spec("openai:gpt-4o-mini"))


def test_an_openai_compatible_spec_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    client = build_client(parse_spec("openai-compatible:llama3@http://127.0.0.1:9/v1"))
    assert isinstance(client, OpenAIChatClient) and key_of(client) == NO_KEY


def test_the_openai_key_goes_to_openai_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("LOCAL_SERVER_KEY", "local-server-key-abcdef")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert key_of(build_client(parse_spec("openai:gpt-4o"))) == OPENAI_KEY
    other = parse_spec("openai-compatible:llama3@http://127.0.0.1:9/v1")
    assert key_of(build_client(other)) == NO_KEY  # not the OpenAI key: the user did not name it for this server
    assert key_of(build_client(other, "LOCAL_SERVER_KEY")) == "local-server-key-abcdef"
    assert key_of(build_client(other, "OPENAI_API_KEY")) == OPENAI_KEY  # named for it: sent
    assert key_of(build_client(parse_spec("openai-compatible:gpt-4o@https://api.openai.com/v1"))) == OPENAI_KEY
    assert key_of(build_client(parse_spec("openai:gpt-4o"), "LOCAL_SERVER_KEY")) == "local-server-key-abcdef"


def test_key_errors_name_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MISSING_KEY", raising=False)
    with pytest.raises(ModelSpecError, match="api_key_env names MISSING_KEY, which is not set"):
        build_client(parse_spec("openai-compatible:m@http://127.0.0.1:9/v1"), "MISSING_KEY")
    with pytest.raises(ModelSpecError, match="takes no API key"):
        build_client(parse_spec("human"), "SOME_KEY")
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", "https://user:pw-s3cret@proxy.example/v1")
    with pytest.raises(ModelSpecError, match=r"OPENAI_BASE_URL 'https://proxy\.example/v1' carries credentials"):
        build_client(parse_spec("openai:gpt-4o"))


def test_a_key_read_is_masked_even_in_a_variable_with_a_plain_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLAIN_NAME", "plain-named-secret-value-42")
    assert "plain-named" in mask_secrets("got plain-named-secret-value-42")
    build_client(parse_spec("openai-compatible:m@http://127.0.0.1:9/v1"), "PLAIN_NAME")
    assert mask_secrets("got plain-named-secret-value-42") == "got ***"


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        ("cut_json", InvalidReply),
        ("garbage", InvalidReply),
        ("wrong_json", InvalidReply),
        ("empty", InvalidReply),
        ("hang", ReplyTimeout),
    ],
)
async def test_a_reply_that_is_not_a_chat_completion_is_a_transient_error(fault: str, error: type) -> None:
    with ChaosServer(lambda m: "hi", in_order([fault])) as server:
        # a deadline only a hang reaches; every other fault is answered well within 60 s on a busy machine
        client = OpenAIChatClient("m", base_url=server.url, api_key=NO_KEY, timeout=2 if fault == "hang" else 60)
        with pytest.raises(error) as raised:  # a hang: the deadline's ReplyTimeout, not the server's eventual reply
            await client.complete([UserMessage(content="q", source="user")], {})
        assert is_transient(raised.value)
        done = await client.complete([UserMessage(content="q", source="user")], {"timeout": 30})
        assert done.texts == ["hi"]
        await client.close()
