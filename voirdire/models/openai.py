"""OpenAI and OpenAI-compatible servers (vLLM, Ollama, llama.cpp server, ...) on the openai SDK.

A thin client of voirdire's own rather than AutoGen's, because the protocols need what AutoGen's client refuses:
``n`` samples in one request, and a reply schema sent as ``response_format`` with a clean fallback. Both are
learnt once per endpoint: a server that answers a ``response_format`` request with HTTP 400 is asked in text from
then on (the reply is still validated), and one that returns fewer choices than ``n`` gets one request per
sample. ``spec_text`` is the spec as printed (credentials dropped), named in errors.

Every request has a deadline (``TIMEOUT_ARG`` in the call's arguments, else the client's ``timeout``): connecting
may take at most ``CONNECT_TIMEOUT_S`` of it, and a request with no complete reply by then raises ``ReplyTimeout``.
An HTTP 200 that is not a chat completion (a body cut off, not JSON, no choices) raises ``InvalidReply``. Both are
transient: the role's agent retries them. The SDK's own retries are off, so every attempt is counted.

The API key is the caller's: ``openai_client`` and ``openai_compatible_client`` take it already resolved (see
``voirdire.models.spec.resolve_api_key``); a server that needs none is sent a placeholder, never another
endpoint's key.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from autogen_core.models import CreateResult, LLMMessage, RequestUsage

from voirdire.models.base import (
    TIMEOUT_ARG,
    Completion,
    InvalidReply,
    ModelSpecError,
    ReplyTimeout,
    TextOnlyClient,
    openai_role,
    text_of,
)

# Generation settings passed through to the API; anything else in a role's arguments is voirdire's own.
_SENT = ("max_tokens", "temperature", "seed", "top_p", "stop")
CHAT_TIMEOUT_S = 30.0
"""The default deadline of one chat request: a bounded reply (256 tokens unless set) from a hosted model comes well
within it; a slow local server needs a larger per-role ``timeout``."""
CONNECT_TIMEOUT_S = 10.0
NO_KEY = "not-needed"
"""Sent where a server needs no key: the SDK insists on one, and no real key goes where it was not named."""


class OpenAIChatClient(TextOnlyClient):
    """Chat completions at ``base_url`` (OpenAI's own when None) with model ``model``."""

    enforces = "response_format"
    # What each endpoint has shown it cannot do, shared by every client of the process.
    _no_response_format: ClassVar[set[str]] = set()
    _no_n: ClassVar[set[str]] = set()

    def __init__(self, model: str, *, base_url: str | None, api_key: str, timeout: float = CHAT_TIMEOUT_S) -> None:
        super().__init__()
        import openai

        self.model = model
        self.endpoint = base_url or "https://api.openai.com/v1"
        self.timeout = timeout
        # max_retries=0: voirdire retries transient errors itself and records how many it took.
        self._client = openai.AsyncOpenAI(
            base_url=base_url, api_key=api_key, max_retries=0, timeout=_http_timeout(timeout)
        )
        self._create_args = {"model": model}  # read by client labels

    def _request(self, messages: Sequence[LLMMessage], args: Mapping[str, Any], n: int, schema: bool) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": openai_role(m), "content": text_of(m)} for m in messages],
            **{k: args[k] for k in _SENT if args.get(k) is not None},
        }
        if n > 1:
            body["n"] = n
        if schema:
            rf = args["response_format"]
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": rf["name"], "schema": rf["schema"], "strict": False},
            }
        return body

    async def _send(self, body: dict[str, Any], timeout: float | None = None) -> Any:
        """One request; its reply checked to be a chat completion with choices."""
        import openai

        deadline = timeout or self.timeout
        try:
            response = await asyncio.wait_for(
                self._client.chat.completions.create(**body, timeout=_http_timeout(deadline)), deadline
            )
        except (TimeoutError, openai.APITimeoutError) as exc:
            raise ReplyTimeout(f"no complete reply within {deadline:g} s (timeout)") from exc
        except (json.JSONDecodeError, openai.APIResponseValidationError) as exc:
            raise InvalidReply(f"HTTP 200 whose body is not a JSON chat completion ({type(exc).__name__})") from exc
        choices = getattr(response, "choices", None)
        if not isinstance(choices, list) or not choices:
            raise InvalidReply("HTTP 200 whose body is not a chat completion (no choices)")
        if any(getattr(c, "message", None) is None for c in choices):
            raise InvalidReply("HTTP 200 with a choice that has no message")
        return response

    async def complete(self, messages: Sequence[LLMMessage], args: Mapping[str, Any], n: int = 1) -> Completion:
        import openai

        timeout = args.get(TIMEOUT_ARG)
        schema = bool(args.get("response_format")) and self.endpoint not in self._no_response_format
        enforcement = None
        if args.get("response_format"):
            enforcement = "response_format" if schema else "text-fallback"
        want = n if self.endpoint not in self._no_n else 1
        requests = 1
        try:
            response = await self._send(self._request(messages, args, want, schema), timeout)
        except openai.BadRequestError:
            if not schema:
                raise
            self._no_response_format.add(self.endpoint)  # refused once: ask in text from now on, and read it
            enforcement, requests = "text-fallback", 2
            response = await self._send(self._request(messages, args, want, False), timeout)
        texts = [(c.message.content or "").strip() for c in response.choices]
        prompt_tokens = response.usage.prompt_tokens if response.usage else 0
        completion_tokens = response.usage.completion_tokens if response.usage else 0
        finish = response.choices[0].finish_reason if response.choices else None
        if n > 1 and len(texts) < n:
            if want > 1:
                self._no_n.add(self.endpoint)  # the endpoint ignored n: one request per sample from now on
            while len(texts) < n:
                more = await self._send(
                    self._request(messages, args, 1, schema and enforcement != "text-fallback"), timeout
                )
                requests += 1
                texts.append((more.choices[0].message.content or "").strip())
                if more.usage:
                    prompt_tokens += more.usage.prompt_tokens
                    completion_tokens += more.usage.completion_tokens
        usage = RequestUsage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
        self._usage = RequestUsage(
            prompt_tokens=self._usage.prompt_tokens + prompt_tokens,
            completion_tokens=self._usage.completion_tokens + completion_tokens,
        )
        return Completion(
            texts=texts[:n], usage=usage, finish_reason=finish, enforcement=enforcement, requests=requests
        )

    async def _complete(self, messages: Sequence[LLMMessage], args: Mapping[str, Any]) -> CreateResult:
        done = await self.complete(messages, args, 1)
        finish = done.finish_reason if done.finish_reason in ("stop", "length") else "unknown"
        return CreateResult(finish_reason=finish, content=done.texts[0], usage=done.usage, cached=False)  # type: ignore[arg-type]

    async def close(self) -> None:
        await self._client.close()


def _http_timeout(seconds: float) -> Any:
    import openai

    return openai.Timeout(seconds, connect=min(seconds, CONNECT_TIMEOUT_S))


def openai_client(model: str | None, *, spec_text: str, api_key: str) -> OpenAIChatClient:
    """OpenAI itself, at OPENAI_BASE_URL when that is set."""
    if not model:
        raise ModelSpecError(f"model spec {spec_text!r}: no model name")
    return OpenAIChatClient(model, base_url=os.environ.get("OPENAI_BASE_URL"), api_key=api_key)


def openai_compatible_client(
    model: str | None, base_url: str | None, *, spec_text: str, api_key: str | None
) -> OpenAIChatClient:
    """Any server that speaks the OpenAI API at ``base_url``, sent ``api_key`` (or a placeholder when None)."""
    if not model or not base_url:
        raise ModelSpecError(f"model spec {spec_text!r}: needs a model and a base URL")
    return OpenAIChatClient(model, base_url=base_url, api_key=api_key or NO_KEY)
