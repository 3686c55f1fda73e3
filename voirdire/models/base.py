"""What every client module shares: the spec error, the errors worth retrying, the default reply length, and the
text-only client base."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from autogen_core import CancellationToken
from autogen_core.models import (
    AssistantMessage,
    ChatCompletionClient,
    CreateResult,
    LLMMessage,
    ModelCapabilities,  # type: ignore[attr-defined]
    ModelFamily,
    ModelInfo,
    RequestUsage,
    SystemMessage,
)
from autogen_core.tools import Tool, ToolSchema
from pydantic import BaseModel

from voirdire.base import VoirdireError

DEFAULT_MAX_TOKENS = 256
TIMEOUT_ARG = "timeout"
"""The key of a call's arguments that carries its deadline in seconds: voirdire's own, never sent to a provider as
a generation setting and never part of a request digest. A client gives up on a request that has no complete
reply within it."""


class ModelSpecError(VoirdireError, ValueError):
    """A model spec or model config that cannot be used; the message says which and why."""


class TransientModelError(Exception):
    """A request that failed in a way the next attempt may not: the caller retries it."""


class ReplyTimeout(TransientModelError, TimeoutError):
    """No complete reply within the role's timeout."""


class InvalidReply(TransientModelError):
    """An HTTP 200 whose body is not a usable chat completion: cut off, not JSON, or without choices."""


class ModelConnectionError(TransientModelError, ConnectionError):
    """No answer over the connection: refused, reset or dropped, or a body cut off mid-transfer (the HTTP
    library's error is the cause)."""


class ModelHTTPError(Exception):
    """An HTTP error answer from a model server: its status, the server's own message and error code, and its
    headers (lower-case names; ``Retry-After`` is read from them). Made by ``http_error``, which picks
    ``TransientHTTPError`` for the answers worth retrying."""

    def __init__(self, status_code: int, message: str, *, code: str | None, headers: Mapping[str, str]) -> None:
        super().__init__(f"HTTP {status_code}: {message}")
        self.status_code = status_code
        self.code = code
        self.headers = headers


class TransientHTTPError(ModelHTTPError, TransientModelError):
    """408, 409, 429 (except an exhausted quota) and 5xx: the server may answer the next attempt."""


def http_error(status_code: int, message: str, *, code: str | None, headers: Mapping[str, str]) -> ModelHTTPError:
    """The error for an HTTP error answer, transient or not by its status (and a 429's code)."""
    transient = status_code in (408, 409) or status_code >= 500
    if status_code == 429:
        transient = code != "insufficient_quota"
    kind = TransientHTTPError if transient else ModelHTTPError
    return kind(status_code, message, code=code, headers=headers)


OVERLOAD_STATUS = frozenset({429, 503, 529})
"""Answers that say the server is over its load: a rate limit, "service unavailable", Anthropic's "overloaded".
They cut the endpoint's adaptive limit (``voirdire.models.limiter``), and they ask the caller to wait, not to give
up (``asks_to_wait``). Other 5xx are faults, not load."""


def asks_to_wait(exc: BaseException) -> bool:
    """Whether ``exc`` is the server asking to be asked again later (a 429 other than an exhausted quota, a 503 or a
    529), not a failure of the request: the retry policy waits for such answers for as long as a call may wait, not
    for a fixed number of attempts (``voirdire.agents.model_agent``)."""
    return isinstance(exc, TransientHTTPError) and exc.status_code in OVERLOAD_STATUS


def text_of(m: LLMMessage) -> str:
    content = m.content
    if isinstance(content, str):
        return content
    return "".join(str(c) for c in content)  # images/function calls are not used by voirdire


def openai_role(m: LLMMessage) -> str:
    if isinstance(m, SystemMessage):
        return "system"
    if isinstance(m, AssistantMessage):
        return "assistant"
    return "user"


@dataclass
class Completion:
    """One or more sampled replies to one request, and how a reply schema was enforced (None: none was asked)."""

    texts: list[str]
    usage: RequestUsage
    finish_reason: str | None = None
    enforcement: str | None = None
    requests: int = 1
    cache_read_tokens: int = 0  # of usage.prompt_tokens: read from the provider's prompt cache
    cache_write_tokens: int = 0  # of usage.prompt_tokens: written to it


class TextOnlyClient(ChatCompletionClient):
    """Shared plumbing for the text-only clients (no tools, no vision): subclasses implement ``_complete``.

    ``complete`` is voirdire's own entry point: ``n`` samples, and a reply schema in ``args["response_format"]``
    (``{"name", "schema"}``) that a client enforces if it can (``enforces``) and otherwise ignores.
    """

    family: str = ModelFamily.UNKNOWN
    enforces: str = "validated"  # how this client holds a reply to a schema

    def __init__(self) -> None:
        self._usage = RequestUsage(prompt_tokens=0, completion_tokens=0)

    @abstractmethod
    async def _complete(self, messages: Sequence[LLMMessage], args: Mapping[str, Any]) -> CreateResult:
        """Produce one completion; ``args`` carries the role's generation settings."""

    async def complete(self, messages: Sequence[LLMMessage], args: Mapping[str, Any], n: int = 1) -> Completion:
        """``n`` samples; the default draws them one request at a time."""
        results = [await self.create(messages, extra_create_args=args) for _ in range(n)]
        return Completion(
            texts=[str(r.content) for r in results],
            usage=RequestUsage(
                prompt_tokens=sum(r.usage.prompt_tokens for r in results),
                completion_tokens=sum(r.usage.completion_tokens for r in results),
            ),
            finish_reason=results[0].finish_reason,
            enforcement=self.enforces if "response_format" in args else None,
            requests=n,
        )

    async def create(
        self,
        messages: Sequence[LLMMessage],
        *,
        tools: Sequence[Tool | ToolSchema] = (),
        tool_choice: Any = "auto",
        json_output: bool | type[BaseModel] | None = None,
        extra_create_args: Mapping[str, Any] = {},
        cancellation_token: CancellationToken | None = None,
    ) -> CreateResult:
        if tools:
            raise ValueError(f"{type(self).__name__} does not support tools")
        result = await self._complete(messages, extra_create_args)
        self._usage = RequestUsage(
            prompt_tokens=self._usage.prompt_tokens + result.usage.prompt_tokens,
            completion_tokens=self._usage.completion_tokens + result.usage.completion_tokens,
        )
        return result

    async def create_stream(  # type: ignore[override]
        self,
        messages: Sequence[LLMMessage],
        *,
        tools: Sequence[Tool | ToolSchema] = (),
        tool_choice: Any = "auto",
        json_output: bool | type[BaseModel] | None = None,
        extra_create_args: Mapping[str, Any] = {},
        cancellation_token: CancellationToken | None = None,
    ) -> AsyncGenerator[str | CreateResult, None]:
        result = await self.create(messages, extra_create_args=extra_create_args)
        yield str(result.content)
        yield result

    async def close(self) -> None:
        return None

    def actual_usage(self) -> RequestUsage:
        return self._usage

    def total_usage(self) -> RequestUsage:
        return self._usage

    def count_tokens(self, messages: Sequence[LLMMessage], *, tools: Sequence[Tool | ToolSchema] = ()) -> int:
        return sum(len(text_of(m).split()) for m in messages)

    def remaining_tokens(self, messages: Sequence[LLMMessage], *, tools: Sequence[Tool | ToolSchema] = ()) -> int:
        return max(0, 8192 - self.count_tokens(messages))

    @property
    def capabilities(self) -> ModelCapabilities:  # type: ignore[override]
        return ModelCapabilities(vision=False, function_calling=False, json_output=False)  # type: ignore[typeddict-item]

    @property
    def model_info(self) -> ModelInfo:
        return ModelInfo(
            vision=False,
            function_calling=False,
            json_output=False,
            family=self.family,
            structured_output=False,
        )
