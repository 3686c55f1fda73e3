"""What the clients of chat APIs other than OpenAI's (``anthropic:``, ``ollama:``) share with voirdire's OpenAI
client: the endpoint's keep-alive pools and adaptive limit, the per-request deadline, voirdire's own errors, and
the cost per call of a direct POST (docs/transport.md): each is an ``OpenAIChatClient`` whose request body, URL,
headers and reply reading are its API's own.

Neither API draws ``n`` samples in one request, so ``n`` samples are ``n`` requests sent together (their seeds,
where the API takes one, differ by the sample's index, so a seeded vote does not repeat one draw ``n`` times).
"""

from __future__ import annotations

import asyncio
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

from autogen_core.models import LLMMessage, RequestUsage

from voirdire.base import token_count
from voirdire.models.base import (
    TIMEOUT_ARG,
    Completion,
    InvalidReply,
)
from voirdire.models.openai import (
    CHAT_TIMEOUT_S,
    OpenAIChatClient,
    _Reply,
    _Shard,
)


def count(value: Any, what: str) -> int:
    """A token count from a reply (0 when absent): ``base.limits.token_count``'s bounds, else ``InvalidReply``."""
    if value is None:
        return 0
    found = token_count(value)
    if found is None:
        raise InvalidReply(f"HTTP 200 with {what} that is not a token count")
    return found


class NativeChatClient(OpenAIChatClient):
    """A chat API spoken directly on voirdire's pools: subclasses build the body (``_body``) and read the reply
    (``_read``); ``url`` is where every request is posted, ``endpoint`` the base URL whose pool and limit it
    shares."""

    api: str = "native"

    def __init__(
        self, model: str, *, endpoint: str, url: str, headers: Mapping[str, str], timeout: float = CHAT_TIMEOUT_S
    ) -> None:
        super().__init__(model, base_url=endpoint, api_key="", timeout=timeout)
        self._url = url
        self._headers = {"Accept": "application/json", "Content-Type": "application/json", **headers}

    @abstractmethod
    def _body(
        self, messages: Sequence[LLMMessage], args: Mapping[str, Any], schema: bool, sample: int
    ) -> dict[str, Any]:
        """The request for one sample (``sample`` counts from 0); ``schema``: enforce ``args["response_format"]``."""

    @abstractmethod
    def _read(self, data: dict[str, Any]) -> _Reply:
        """The reply's text (the JSON a schema asked for, when one was), finish reason and usage."""

    @property
    def reply_name(self) -> str:  # type: ignore[override]
        return f"{self.api} reply"

    async def _post(self, shard: _Shard, body: dict[str, Any], deadline: float) -> _Reply:
        data = await self._post_json(shard, body, deadline)
        if not isinstance(data, dict):
            raise InvalidReply(f"HTTP 200 whose body is not a {self.api} reply")
        return self._read(data)

    async def complete(self, messages: Sequence[LLMMessage], args: Mapping[str, Any], n: int = 1) -> Completion:
        schema = bool(args.get("response_format"))
        timeout = args.get(TIMEOUT_ARG)
        if n == 1:
            replies = [await self._send(self._body(messages, args, schema, 0), timeout)]
        else:
            sends = (self._send(self._body(messages, args, schema, k), timeout) for k in range(n))
            replies = list(await asyncio.gather(*sends))
        usage = RequestUsage(
            prompt_tokens=sum(r.prompt_tokens for r in replies),
            completion_tokens=sum(r.completion_tokens for r in replies),
        )
        self._usage = RequestUsage(
            prompt_tokens=self._usage.prompt_tokens + usage.prompt_tokens,
            completion_tokens=self._usage.completion_tokens + usage.completion_tokens,
        )
        return Completion(
            texts=[r.texts[0] for r in replies],
            usage=usage,
            finish_reason=replies[0].finish_reason,
            enforcement=self.enforces if schema else None,
            requests=n,
            cache_read_tokens=sum(r.cache_read for r in replies),
            cache_write_tokens=sum(r.cache_write for r in replies),
        )


def sample_seed(args: Mapping[str, Any], sample: int) -> int | None:
    """The seed of sample ``sample`` of a call: the call's seed plus the index (None when the call has none)."""
    seed = args.get("seed")
    return None if seed is None else (int(seed) + sample) % 2**31
