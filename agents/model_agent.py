"""An LLM-backed role: an autogen ``BaseChatAgent`` with its own conversation memory and counted retries."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Sequence
from typing import Any

from autogen_agentchat.agents import BaseChatAgent
from autogen_agentchat.base import Response
from autogen_agentchat.messages import BaseAgentEvent, BaseChatMessage, TextMessage
from autogen_core import CancellationToken
from autogen_core.models import (
    AssistantMessage,
    ChatCompletionClient,
    LLMMessage,
    RequestUsage,
    SystemMessage,
    UserMessage,
)
from pydantic import Field

from voirdire.cache import CachedReply, ResponseCache, cacheable
from voirdire.models import RoleSettings
from voirdire.models.base import Completion, TextOnlyClient

# Message metadata a ModelAgent understands (autogen metadata is str -> str). ROLE_KEY="system" makes the text a
# system message; TEMPERATURE_KEY and SEED_KEY override the role's sampling for one call.
ROLE_KEY = "voirdire.role"
TEMPERATURE_KEY = "voirdire.temperature"
SEED_KEY = "voirdire.seed"
# A reply schema ({"name", "schema"} as JSON) for the backend to enforce, and the number of samples to draw.
SCHEMA_KEY = "voirdire.schema"
SAMPLES_KEY = "voirdire.samples"


def call_metadata(
    *,
    system: bool = False,
    temperature: float | None = None,
    seed: int | None = None,
    schema: str | None = None,
    samples: int = 1,
) -> dict[str, str]:
    """The metadata of one message to a ModelAgent."""
    meta: dict[str, str] = {}
    if system:
        meta[ROLE_KEY] = "system"
    if temperature is not None:
        meta[TEMPERATURE_KEY] = str(temperature)
    if seed is not None:
        meta[SEED_KEY] = str(seed)
    if schema is not None:
        meta[SCHEMA_KEY] = schema
    if samples != 1:
        meta[SAMPLES_KEY] = str(samples)
    return meta


class ModelCallError(RuntimeError):
    """A model call that failed for good: names the role, the model and how often it was retried."""


class CallInfo(BaseAgentEvent):
    """One model call, carried in the agent's ``Response.inner_messages``; the Session records it."""

    model: str
    request_digest: str
    response: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    retries: int
    finish_reason: str | None
    cached: bool = False
    samples: list[str] = Field(
        default_factory=list
    )  # every sample when more than one was drawn; ``response`` is the first
    enforcement: str | None = None  # how a reply schema was held (see ModelCall.enforcement)
    requests: int = 1  # HTTP requests (or generations) it took

    def to_text(self) -> str:
        return f"{self.model}: {self.completion_tokens} tokens in {self.latency_s:.2f}s"


def _digest(model: str, messages: Sequence[LLMMessage], args: dict[str, object]) -> str:
    payload = json.dumps(
        {"model": model, "messages": [[type(m).__name__, m.content] for m in messages], "args": args},
        sort_keys=True,
        default=str,
    )
    return "sha256:" + hashlib.sha256(payload.encode()).hexdigest()


def is_transient(exc: BaseException) -> bool:
    """Errors worth retrying: timeouts, dropped connections, rate limits and 5xx answers."""
    try:
        import openai
    except ImportError:  # pragma: no cover - openai is a core dependency
        return isinstance(exc, TimeoutError | ConnectionError)
    if isinstance(exc, openai.APIConnectionError | openai.APITimeoutError | openai.RateLimitError):
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code >= 500
    return isinstance(exc, TimeoutError | ConnectionError)


class ModelAgent(BaseChatAgent):
    """One role played by a model. It keeps the role's conversation, so multi-turn protocols (a cross-examination)
    see earlier turns as the paper prescribes; ``on_reset`` starts a fresh conversation."""

    def __init__(
        self,
        name: str,
        client: ChatCompletionClient,
        settings: RoleSettings,
        *,
        model_label: str | None = None,
        max_retries: int = 3,
        backoff_s: float = 0.5,
        cache: ResponseCache | None = None,
    ) -> None:
        super().__init__(name=name, description=f"{name} played by {model_label or settings.model}")
        self.client = client
        self.settings = settings
        self.model_label = model_label or settings.model
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.cache = cache
        self.history: list[LLMMessage] = []

    @property
    def produced_message_types(self) -> Sequence[type[BaseChatMessage]]:
        return (TextMessage,)

    async def on_messages(self, messages: Sequence[BaseChatMessage], cancellation_token: CancellationToken) -> Response:
        temperature: float | None = None
        seed: int | None = None
        schema: str | None = None
        samples = 1
        for m in messages:
            text = m.to_model_text()
            if m.metadata.get(ROLE_KEY) == "system":
                self.history.append(SystemMessage(content=text))
            else:
                self.history.append(UserMessage(content=text, source=m.source))
            if TEMPERATURE_KEY in m.metadata:
                temperature = float(m.metadata[TEMPERATURE_KEY])
            if SEED_KEY in m.metadata:
                seed = int(m.metadata[SEED_KEY])
            schema = m.metadata.get(SCHEMA_KEY, schema)
            samples = int(m.metadata.get(SAMPLES_KEY, samples))
        args = self.settings.create_args(temperature=temperature, seed=seed)
        if schema is not None:
            args["response_format"] = json.loads(schema)
        digest = _digest(self.model_label, self.history, args)
        # Each sample has its own cache entry, so a vote is never served one sample k times.
        keys = [digest] + [f"{digest}#{i}" for i in range(1, samples)]
        start = time.perf_counter()
        cache = self.cache if self.cache is not None and cacheable(args) else None
        found = [cache.get(k) for k in keys] if cache is not None else []
        cached = bool(found) and all(r is not None for r in found)
        retries, requests = 0, 0
        if cached:
            replies = [r for r in found if r is not None]
        else:
            done, retries = await self._complete(args, samples, cancellation_token)
            requests = done.requests
            replies = [
                CachedReply(
                    text=text,
                    # the request's usage is booked on the first sample
                    prompt_tokens=done.usage.prompt_tokens if i == 0 else 0,
                    completion_tokens=done.usage.completion_tokens if i == 0 else 0,
                    finish_reason=done.finish_reason,
                    enforcement=done.enforcement,
                )
                for i, text in enumerate(done.texts)
            ]
            if cache is not None:
                for key, reply in zip(keys, replies, strict=True):
                    cache.put(key, reply)
        first = replies[0]
        self.history.append(AssistantMessage(content=first.text, source=self.name))
        prompt_tokens = sum(r.prompt_tokens for r in replies)
        completion_tokens = sum(r.completion_tokens for r in replies)
        call = CallInfo(
            source=self.name,
            model=self.model_label,
            request_digest=digest,
            response=first.text,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            latency_s=round(time.perf_counter() - start, 4),
            retries=retries,
            finish_reason=first.finish_reason,
            cached=cached,
            samples=[r.text for r in replies] if samples > 1 else [],
            enforcement=first.enforcement,
            requests=requests,
        )
        usage = RequestUsage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
        return Response(
            chat_message=TextMessage(content=first.text, source=self.name, models_usage=usage), inner_messages=[call]
        )

    async def _request(self, args: dict[str, Any], n: int, token: CancellationToken) -> Completion:
        """One call for ``n`` samples: voirdire's clients draw them (and enforce a schema) themselves; any other
        autogen client is asked ``n`` times with the schema left out and its replies validated."""
        if isinstance(self.client, TextOnlyClient):
            return await self.client.complete(self.history, args, n)
        plain = {k: v for k, v in args.items() if k != "response_format"}
        results = [
            await self.client.create(self.history, extra_create_args=plain, cancellation_token=token) for _ in range(n)
        ]
        texts = [
            r.content if isinstance(r.content, str) else json.dumps([c.model_dump() for c in r.content])
            for r in results
        ]
        return Completion(
            texts=texts,
            usage=RequestUsage(
                prompt_tokens=sum(r.usage.prompt_tokens for r in results),
                completion_tokens=sum(r.usage.completion_tokens for r in results),
            ),
            finish_reason=results[0].finish_reason,
            enforcement="validated" if "response_format" in args else None,
            requests=n,
        )

    async def _complete(self, args: dict[str, Any], n: int, token: CancellationToken) -> tuple[Completion, int]:
        """Call the model, retrying transient failures with exponential backoff; returns the retry count too."""
        retries = 0
        while True:
            try:
                return await self._request(args, n, token), retries
            except Exception as exc:
                if retries >= self.max_retries or not is_transient(exc):
                    raise ModelCallError(
                        f"{self.name} via {self.model_label}: {type(exc).__name__}: {exc}"
                        + (f" (after {retries} retries)" if retries else "")
                    ) from exc
                retries += 1
                await asyncio.sleep(self.backoff_s * 2 ** (retries - 1))

    def remember(self, role: str, text: str) -> None:
        """Seed the conversation (e.g. the examinee's own claim) without calling the model."""
        if role == "assistant":
            self.history.append(AssistantMessage(content=text, source=self.name))
        elif role == "system":
            self.history.append(SystemMessage(content=text))
        else:
            self.history.append(UserMessage(content=text, source="moderator"))

    async def on_reset(self, cancellation_token: CancellationToken) -> None:
        self.history.clear()
