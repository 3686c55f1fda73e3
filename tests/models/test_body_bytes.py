"""Request bodies are the bytes the openai SDK (httpx's ``json.dumps(ensure_ascii=False, separators=(",", ":"),
allow_nan=False)``) writes, whichever encoder writes them; reply bodies read as ``json.loads`` reads them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from autogen_core.models import AssistantMessage, LLMMessage, SystemMessage, UserMessage

from voirdire.models.openai import OpenAIChatClient, _encode, _loads


def sdk(body: dict[str, Any]) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


# Every Unicode scalar value, in strings of 2,048 code points, each with quotes, backslashes and controls beside it.
EVERY = ["".join(chr(c) for c in range(start, start + 2048) if not 0xD800 <= c <= 0xDFFF) + '"\\\n\t\x00\x7f'
         for start in range(0, 0x110000, 2048)]  # fmt: skip


def test_every_code_point_is_written_as_the_sdk_writes_it() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": text} for text in EVERY], "max_tokens": 9}
    assert _encode(body) == sdk(body)


@pytest.mark.parametrize(
    "args",
    [
        {},
        {"temperature": 0.7, "max_tokens": 256, "seed": 3},
        {"temperature": 1e-7, "top_p": 1e16, "stop": ["\n", "é"], "max_tokens": 1},
        {"temperature": -0.0, "stop": "END", "response_format": {"name": "r", "schema": {"minimum": 1.5e-5}}},
    ],
)
@pytest.mark.parametrize("n", [1, 3])
def test_a_clients_request_body_is_the_sdks(args: dict[str, Any], n: int) -> None:
    client = OpenAIChatClient("modèle", base_url="http://127.0.0.1:1/v1", api_key="k")
    messages: list[LLMMessage] = [
        SystemMessage(content="Be terse. 東京 \u2028"),
        UserMessage(content='Claim: "x" \\ y', source="moderator"),
        AssistantMessage(content="1. Why?", source="examiner"),
    ]
    body = client._request(messages, args, n, "response_format" in args)
    assert _encode(body) == sdk(body)


class Text(str):
    pass


@pytest.mark.parametrize(
    "messages",
    [
        [{"role": "user", "content": Text("a str subclass")}],
        [{"role": "user", "content": [{"type": "text", "text": "parts"}]}],
        [{"role": "user", "content": "x", "name": None}],
        ({"role": "user", "content": "a tuple"},),
    ],
)
def test_messages_other_than_plain_text_are_written_as_the_sdk_writes_them(messages: Any) -> None:
    body = {"model": "m", "messages": messages, "temperature": 0.5}
    assert _encode(body) == sdk(body)


def test_a_body_with_keys_other_than_text_is_written_as_the_sdk_writes_it() -> None:
    body: dict[Any, Any] = {"model": "m", "messages": [{"role": "user", "content": "x"}], 7: 1.5, True: None}
    assert _encode(body) == sdk(body)


def test_what_the_sdk_cannot_write_fails_as_before() -> None:
    with pytest.raises(ValueError, match="Out of range float values"):
        _encode({"model": "m", "messages": [{"role": "user", "content": "x"}], "temperature": float("nan")})
    with pytest.raises(UnicodeEncodeError):
        _encode({"model": "m", "messages": [{"role": "user", "content": "lone \ud800"}]})


@pytest.mark.parametrize(
    "content",
    [
        b'{"choices": [{"message": {"content": "ok \\u00e9 \xc3\xa9"}}], "usage": {"prompt_tokens": 3}}',
        b'{"a": 1, "a": 2, "b": [1e-7, -0.0, 5e-324, 1.7976931348623157e308]}',
        b'{"big": 123456789012345678901234567890, "inf": 1e400, "nan": NaN}',
        b'{"lone": "\\ud800"}',
        '{"utf16": "\u00e9"}'.encode("utf-16"),
        b'\xef\xbb\xbf{"bom": true}',
        b"  [1, 2]\n",
    ],
)
def test_a_reply_body_reads_as_json_loads_reads_it(content: bytes) -> None:
    got, expected = _loads(content), json.loads(content)
    assert got == expected or json.dumps(got) == json.dumps(expected)  # NaN is not equal to itself


@pytest.mark.parametrize("content", [b"", b"not json", b'{"a": 1', b"\xff\xfe\xfd", b'{"a": 1} trailing'])
def test_what_is_not_json_raises_json_loads_error(content: bytes) -> None:
    with pytest.raises(ValueError) as raised:
        json.loads(content)
    with pytest.raises(type(raised.value)):
        _loads(content)


@pytest.mark.parametrize(
    "order",
    [("messages",), ("messages", "model", "n"), ("model", "messages"), ("model", "n", "messages", "stop", "seed")],
)
def test_members_before_and_after_the_messages_are_written_in_their_place(order: tuple[str, ...]) -> None:
    values: dict[str, Any] = {"model": "m é", "n": 2, "stop": ["\n"], "seed": -3}
    messages = [{"role": "user", "content": 'a "b"'}, {"role": "assistant", "content": "c\u2028"}]
    body = {key: messages if key == "messages" else values[key] for key in order}
    assert _encode(body) == sdk(body)
