"""``anthropic:MODEL``: Anthropic's Messages API (``POST /v1/messages``), spoken directly on voirdire's pools.

The request is the API's own: the leading system messages become its ``system`` text, the rest alternate user and
assistant turns (consecutive turns of one side are joined, a later system message is read as the user's, since the
API has no other place for it), ``max_tokens`` is always sent (the API requires it), ``stop`` is sent as
``stop_sequences``, and ``seed`` is not sent (the API has none). A reply schema is enforced by tool use: one tool
whose ``input_schema`` is the schema, and ``tool_choice`` forcing it, so the reply is the tool call's input (JSON
that fits the schema). ``n`` samples are ``n`` requests.

Prompt caching (Anthropic's ``cache_control``): the stable prefix of a request, its system text and the
conversation before the newest turn, gets a breakpoint at its end when it is at least the model's minimum cacheable
length (``cache_minimum``: 1,024 tokens, 2,048 for the Haiku 3 models, 4,096 for Opus 4.5 and Haiku 4.5; counted at
four characters a token, so a prefix near the minimum may go unmarked or be marked and not cached, which costs
nothing). The system text gets its own breakpoint when it alone is that long. The next request of the same
conversation then reads the prefix from the cache (billed at ``cached_input``); writing it costs ``cache_write``.
The reply's ``cache_read_input_tokens`` and ``cache_creation_input_tokens`` are recorded apart from the uncached
``input_tokens``. ``prompt_cache = false`` for a role (``--no-prompt-cache``) sends no breakpoint.

The key is ``ANTHROPIC_API_KEY`` (or the role's ``api_key_env``), sent as ``x-api-key``; ``ANTHROPIC_BASE_URL``
replaces ``https://api.anthropic.com``. A 429 with ``retry-after`` and a 529 ("overloaded") are transient: the
role's retry policy waits as the server asks (``voirdire.agents.model_agent``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from autogen_core.models import AssistantMessage, LLMMessage, SystemMessage

from voirdire.models.base import InvalidReply, ModelSpecError, text_of
from voirdire.models.native import NativeChatClient, count
from voirdire.models.openai import CHAT_TIMEOUT_S, _Reply

ANTHROPIC_URL = "https://api.anthropic.com"
BASE_URL_ENV = "ANTHROPIC_BASE_URL"
API_VERSION = "2023-06-01"
"""The ``anthropic-version`` header: the Messages API's version (the only one it has)."""
_STOPS = {"end_turn": "stop", "stop_sequence": "stop", "tool_use": "stop", "max_tokens": "length"}
CACHE_CHARS_PER_TOKEN = 4  # the prefix's length in tokens, estimated without the model's tokenizer
EPHEMERAL = {"type": "ephemeral"}
# The minimum cacheable prompt per model family (Anthropic's prompt-caching guide, November 2025); others: 1,024.
_CACHE_MINIMUMS = (("opus-4-5", 4096), ("haiku-4-5", 4096), ("3-5-haiku", 2048), ("3-haiku", 2048))


def cache_minimum(model: str) -> int:
    """The fewest prompt tokens ``model`` caches: a shorter prefix marked for the cache is not cached."""
    return next((n for name, n in _CACHE_MINIMUMS if name in model), 1024)


def cache_breakpoints(system: str, conversation: list[dict[str, Any]], minimum: int) -> tuple[Any, int]:
    """The system (text, or blocks with a breakpoint) and the conversation with a breakpoint on the last turn
    before the newest, where the prefix up to it is at least ``minimum`` tokens; and the breakpoints set."""
    marks = 0
    size = len(system) // CACHE_CHARS_PER_TOKEN
    out_system: Any = system
    if system and size >= minimum:
        out_system = [{"type": "text", "text": system, "cache_control": EPHEMERAL}]
        marks += 1
    if len(conversation) >= 2:
        size += sum(len(turn["content"]) for turn in conversation[:-1]) // CACHE_CHARS_PER_TOKEN
        if size >= minimum:
            stable = conversation[-2]
            stable["content"] = [{"type": "text", "text": stable["content"], "cache_control": EPHEMERAL}]
            marks += 1
    return out_system, marks


def base_url() -> str:
    """Where the Messages API is: ``ANTHROPIC_BASE_URL``, else Anthropic's own."""
    return (os.environ.get(BASE_URL_ENV) or ANTHROPIC_URL).rstrip("/")


def messages_url(base: str) -> str:
    """``/v1/messages`` under the base URL (given without ``/v1``, as the SDK takes it; a ``/v1`` is not doubled)."""
    base = base.rstrip("/")
    return f"{base}/messages" if base.endswith("/v1") else f"{base}/v1/messages"


def turns(messages: Sequence[LLMMessage]) -> tuple[str, list[dict[str, Any]]]:
    """The system text and the alternating turns the API takes, starting with the user's."""
    system: list[str] = []
    out: list[dict[str, Any]] = []
    for m in messages:
        text = text_of(m)
        if isinstance(m, SystemMessage) and not out:
            system.append(text)
            continue
        role = "assistant" if isinstance(m, AssistantMessage) else "user"
        if out and out[-1]["role"] == role:
            out[-1]["content"] += "\n\n" + text
        else:
            out.append({"role": role, "content": text})
    if not out or out[0]["role"] != "user":  # the API opens with the user; a conversation never does otherwise
        out.insert(0, {"role": "user", "content": "Continue."})
    for turn in out:
        if not turn["content"].strip():  # the API refuses empty text
            turn["content"] = "(empty)"
    return "\n\n".join(system), out


class AnthropicClient(NativeChatClient):
    """Claude through the Messages API."""

    api = "Anthropic message"
    enforces = "tool_use"

    def __init__(self, model: str, *, api_key: str, base: str | None = None, timeout: float = CHAT_TIMEOUT_S) -> None:
        root = (base or base_url()).rstrip("/")
        headers = {"x-api-key": api_key, "anthropic-version": API_VERSION, "User-Agent": "voirdire (anthropic)"}
        super().__init__(model, endpoint=root, url=messages_url(root), headers=headers, timeout=timeout)

    def _body(
        self, messages: Sequence[LLMMessage], args: Mapping[str, Any], schema: bool, sample: int
    ) -> dict[str, Any]:
        system, conversation = turns(messages)
        body: dict[str, Any] = {"model": self.model, "max_tokens": int(args.get("max_tokens") or 256)}
        marked: Any = system
        if args.get("prompt_cache", True):
            marked, _ = cache_breakpoints(system, conversation, cache_minimum(self.model))
        if system:
            body["system"] = marked
        body["messages"] = conversation
        for key in ("temperature", "top_p"):
            if args.get(key) is not None:
                body[key] = args[key]
        stop = args.get("stop")
        if stop:
            body["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
        if schema:
            rf = args["response_format"]
            body["tools"] = [
                {"name": _tool_name(rf["name"]), "description": "Give the reply.", "input_schema": rf["schema"]}
            ]
            body["tool_choice"] = {"type": "tool", "name": _tool_name(rf["name"])}
        return body

    def _read(self, data: dict[str, Any]) -> _Reply:
        content = data.get("content")
        if not isinstance(content, list):
            raise InvalidReply("HTTP 200 whose body is not an Anthropic message (no content)")
        texts: list[str] = []
        tool_input: str | None = None
        for block in content:
            if not isinstance(block, dict):
                raise InvalidReply("HTTP 200 with a content block that is not an object")
            if block.get("type") == "tool_use" and tool_input is None:
                tool_input = _json(block.get("input"))
            elif block.get("type") == "text":
                text = block.get("text")
                if not isinstance(text, str):
                    raise InvalidReply("HTTP 200 with a text block whose text is not text")
                texts.append(text)
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        # input_tokens are the uncached ones: the prompt is them, the cache's reads and its writes, each billed apart
        uncached, written, read = (
            count(usage.get(k), f"usage.{k}")
            for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        )
        stop = data.get("stop_reason")
        return _Reply(
            texts=[tool_input if tool_input is not None else "".join(texts).strip()],
            finish_reason=_STOPS.get(stop, stop) if isinstance(stop, str) else None,
            prompt_tokens=uncached + written + read,
            completion_tokens=count(usage.get("output_tokens"), "usage.output_tokens"),
            cache_read=read,
            cache_write=written,
        )


def _tool_name(name: str) -> str:
    """A tool name the API accepts (letters, digits, ``_`` and ``-``, at most 64)."""
    cleaned = "".join(c if c.isalnum() or c in "_-" else "_" for c in name)[:64]
    return cleaned or "reply"


def _json(value: Any) -> str:
    if not isinstance(value, dict):
        raise InvalidReply("HTTP 200 with a tool call whose input is not an object")
    return json.dumps(value, ensure_ascii=False)


def anthropic_client(
    model: str | None, *, spec_text: str, api_key: str, timeout: float = CHAT_TIMEOUT_S
) -> AnthropicClient:
    if not model:
        raise ModelSpecError(f"model spec {spec_text!r}: no model name")
    return AnthropicClient(model, api_key=api_key, timeout=timeout)
