"""An LLM-backed role: an autogen ``BaseChatAgent`` with its own conversation memory and counted retries.

Retry policy (run by tenacity): a transient failure (``is_transient``: no reply within the role's timeout, a
dropped connection, an HTTP 200 whose body is cut off or not a chat completion, 408/409/429 and 5xx answers) is
retried up to ``max_retries`` times. A 429, 503 or 529 (``asks_to_wait``) is not a failure but the server asking
to be asked later: it does not count toward ``max_retries``; it is retried until the call has waited
``rate_limit_wait_s`` in all (``RATE_LIMIT_WAIT_S`` by default), or its session's budget (``session_timeout``)
ends it, however many attempts that takes. A fixed count failed calls whose four attempts a busy rate limiter all
refused, though it would have answered the fifth. The wait before retry ``k`` is drawn uniformly from
``[0, min(backoff_cap_s, backoff_s * 2**(k-1))]`` (exponential backoff with full jitter, so concurrent sessions do
not retry in lockstep); a server that says how long to wait (``Retry-After`` in seconds or as an HTTP date, or
``retry-after-ms``) is waited for that long plus a jitter of up to ``backoff_s``, and one that asks for more than
``retry_after_cap_s`` is not retried.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import hashlib
import json
import os
import random
import time
from collections.abc import Callable, Mapping, Sequence
from json.encoder import encode_basestring_ascii
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
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception
from tenacity.stop import stop_base
from tenacity.wait import wait_base

from voirdire.base import cut_reply, max_reply_chars
from voirdire.models import (
    TIMEOUT_ARG,
    Completion,
    ModelConnectionError,
    ReplyTimeout,
    RoleSettings,
    TextOnlyClient,
    TransientModelError,
    asks_to_wait,
)
from voirdire.transcript import CachedReply, ResponseCache, cacheable

# Message metadata a ModelAgent understands (autogen metadata is str -> str). ROLE_KEY="system" makes the text a
# system message; TEMPERATURE_KEY and SEED_KEY override the role's sampling for one call.
ROLE_KEY = "voirdire.role"
TEMPERATURE_KEY = "voirdire.temperature"
SEED_KEY = "voirdire.seed"
# A reply schema ({"name", "schema"} as JSON) for the backend to enforce, and the number of samples to draw.
SCHEMA_KEY = "voirdire.schema"
SAMPLES_KEY = "voirdire.samples"
# A one-off request: sent without the role's conversation and kept out of it, so independent calls to one role
# (the oracle's extractions of several sentences) can run at once.
FRESH_KEY = "voirdire.fresh"
# A request asked again because its reply was cut off at max_tokens: the budget it is asked with, and that it
# replaces the cut-off exchange at the end of the role's conversation (the Session's re-ask, ``Session.ask``).
MAX_TOKENS_KEY = "voirdire.max_tokens"
REASK_KEY = "voirdire.reask"

RATE_LIMIT_WAIT_S = 300.0
"""The most one call waits in all, over its retries, for a server that asks it to wait (429, 503, 529): five of the
longest waits retried (60 s each, ``retry_after_cap_s``). A session's budget (``session_timeout``) ends it sooner."""


_IDS = random.Random()  # seeded from os.urandom; a forked worker draws a seed of its own
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_IDS.seed)
# uuid.UUID(int=..., version=4)'s bits: the variant (10xx) and the version (0100) set, the rest random.
_ID_CLEAR = ~((0xC000 << 48) | (0xF000 << 64))
_ID_SET = (0x8000 << 48) | (4 << 76)


def message_id() -> str:
    """An id for one of autogen's messages or events, in the form autogen's default gives (``str(uuid.uuid4())``:
    a random version-4 UUID), from this process's generator instead of an ``os.urandom`` call and a ``UUID`` object
    each (three a model call). The ids tell messages apart in memory; none is written anywhere."""
    h = "%032x" % (_IDS.getrandbits(128) & _ID_CLEAR | _ID_SET)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _traced() -> bool:
    """Whether OpenTelemetry has a tracer provider that could record autogen's spans: one set in code or named by
    ``OTEL_PYTHON_TRACER_PROVIDER`` (``get_tracer_provider`` loads that one); without either, every span is a
    non-recording one."""
    from opentelemetry import trace

    provider = trace.get_tracer_provider()
    return not isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider))


def call_metadata(
    *,
    system: bool = False,
    temperature: float | None = None,
    seed: int | None = None,
    schema: str | None = None,
    samples: int = 1,
    fresh: bool = False,
    max_tokens: int | None = None,
    reask: bool = False,
) -> dict[str, str]:
    """The metadata of one message to a ModelAgent."""
    meta: dict[str, str] = {}
    if max_tokens is not None:
        meta[MAX_TOKENS_KEY] = str(max_tokens)
    if reask:
        meta[REASK_KEY] = "1"
    if fresh:
        meta[FRESH_KEY] = "1"
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
    """A model call that failed for good: names the role, the model and how often it was retried (``role`` and
    ``retries`` say it for the transcript's error record too)."""

    def __init__(self, message: str, *, role: str | None = None, retries: int = 0) -> None:
        super().__init__(message)
        self.role, self.retries = role, retries


class CallInfo(BaseAgentEvent):
    """One model call, carried in the agent's ``Response.inner_messages``; the Session records it."""

    model: str
    request_digest: str
    response: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    retries: int
    cache_read_tokens: int = 0  # of prompt_tokens: read from the provider's prompt cache
    cache_write_tokens: int = 0  # of prompt_tokens: written to it
    finish_reason: str | None
    cached: bool = False
    samples: list[str] = Field(
        default_factory=list
    )  # every sample when more than one was drawn; ``response`` is the first
    enforcement: str | None = None  # how a reply schema was held (see ModelCall.enforcement)
    requests: int = 1  # HTTP requests (or generations) it took
    coalesced: bool = False  # answered by an identical request of the same session (see CallSharing)

    def to_text(self) -> str:
        return f"{self.model}: {self.completion_tokens} tokens in {self.latency_s:.2f}s"


def message_json(m: LLMMessage) -> str:
    """One message as the request digest's JSON writes it: ``[type name, content]``."""
    content = m.content
    if type(content) is str:
        return f"[{encode_basestring_ascii(type(m).__name__)}, {encode_basestring_ascii(content)}]"
    return json.dumps([type(m).__name__, content], sort_keys=True, default=str)


def _digest(
    model: str,
    messages: Sequence[LLMMessage],
    args: dict[str, object],
    encoded: Callable[[LLMMessage], str] = message_json,
) -> str:
    """The request's digest (recorded with each model call, the response cache's key): sha256 of
    ``json.dumps({"model": model, "messages": [[type name, content], ...], "args": args}, sort_keys=True,
    default=str)``. That JSON is written here piece by piece, the same bytes: each message's piece by ``encoded``,
    which a ModelAgent caches per message, so the earlier turns of a conversation are encoded once, not again at
    every call that carries them."""
    payload = (
        f'{{"args": {_args_json(args)}, "messages": [{", ".join(map(encoded, messages))}]'
        f', "model": {_model_json(model)}}}'
    )
    return "sha256:" + hashlib.sha256(payload.encode()).hexdigest()


@functools.lru_cache(maxsize=256)
def _model_json(model: str) -> str:
    """``json.dumps(model, sort_keys=True, default=str)``: a run's few model labels, each written once."""
    return json.dumps(model, sort_keys=True, default=str)


_PLAIN = frozenset({str, int, float, bool, type(None)})
_ARGS_JSON: dict[str, str] = {}
_ARGS_JSON_MAX = 1024


def _args_json(args: dict[str, object]) -> str:
    """``json.dumps(args, sort_keys=True, default=str)``, kept for arguments of plain values (a role's sampling
    settings, the same at nearly every call), by their ``repr``: exact for these types (``1``, ``1.0``, ``True``
    and ``-0.0`` all differ), unlike equality."""
    if not all(type(v) in _PLAIN for v in args.values()):
        return json.dumps(args, sort_keys=True, default=str)
    key = repr(args)
    text = _ARGS_JSON.get(key)
    if text is None:
        if len(_ARGS_JSON) >= _ARGS_JSON_MAX:  # many seeds: start over rather than grow
            _ARGS_JSON.clear()
        text = _ARGS_JSON[key] = json.dumps(args, sort_keys=True, default=str)
    return text


def sharing_key(
    model: str,
    messages: Sequence[LLMMessage],
    args: dict[str, object],
    samples: int,
    digest: str,
    encoded: Callable[[LLMMessage], str] = message_json,
) -> str | None:
    """The key under which identical deterministic requests of one session are answered once; None for a request
    that must be drawn afresh (sampled without a seed). A greedy request ignores its seed (it draws nothing), so
    LMvLM (Majority)'s examinations, which differ only by seed, share their greedy calls. ``digest`` is the
    request's own digest, reused when no seed is dropped."""
    if not cacheable(args):
        return None
    if "seed" in args and not args.get("temperature"):
        digest = _digest(model, messages, {k: v for k, v in args.items() if k != "seed"}, encoded)
    return f"{digest}#{samples}"


class CallSharing:
    """Request coalescing within one session: an identical deterministic request already answered, or still in
    flight, is answered with the same replies instead of being sent again (the transcript marks it ``coalesced``).
    The Session owns one and gives it to every model agent it drives."""

    def __init__(self) -> None:
        self._calls: dict[str, asyncio.Future[list[CachedReply]]] = {}

    def find(self, key: str) -> asyncio.Future[list[CachedReply]] | None:
        return self._calls.get(key)

    def claim(self, key: str) -> asyncio.Future[list[CachedReply]]:
        """Register the request that will answer ``key``; identical ones wait on its future."""
        future: asyncio.Future[list[CachedReply]] = asyncio.get_running_loop().create_future()
        self._calls[key] = future
        return future

    def fail(self, key: str, future: asyncio.Future[list[CachedReply]], exc: BaseException) -> None:
        """The request failed: its waiters get the error, and a later identical request is sent again."""
        if self._calls.get(key) is future:
            del self._calls[key]
        if not future.done():
            future.set_exception(exc)
            future.exception()  # retrieved: no "never retrieved" warning when nobody waited


def is_transient(exc: BaseException) -> bool:
    """Errors worth retrying: voirdire's transient errors (no reply in time, a dropped connection, a 200 whose body is
    not a chat completion, rate limits except an exhausted quota, 408, 409 and 5xx answers), and the builtin timeouts
    and connection errors of any other client."""
    return isinstance(exc, TransientModelError | TimeoutError | ConnectionError)


def retry_after(exc: BaseException, now: float | None = None) -> float | None:
    """Seconds the server asked to wait (``retry-after-ms``, or ``Retry-After`` in seconds or as an HTTP date);
    None when it did not say. The headers are the error's own (voirdire's ``ModelHTTPError``) or its response's."""
    headers: Mapping[str, str] | None = getattr(exc, "headers", None)
    if not isinstance(headers, Mapping):
        headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def backoff_delay(retry: int, base_s: float, cap_s: float, rng: random.Random | None = None) -> float:
    """The wait before retry number ``retry`` (1, 2, ...): exponential backoff with full jitter."""
    return (rng or random).uniform(0, min(cap_s, base_s * 2 ** (retry - 1)))


class stop_after_budget(stop_base):
    """Tenacity's stop for one call: more than ``max_retries`` failures other than a server asking to wait, or a
    next wait for one that would take the call's waits for such answers past ``wait_cap_s`` in all. Counts what
    it saw for the error message (``reason``: "retries" or "wait", None while it has not stopped the call)."""

    def __init__(self, max_retries: int, wait_cap_s: float) -> None:
        self.max_retries = max_retries
        self.wait_cap_s = wait_cap_s
        self.failures = 0  # transient failures other than a server asking to wait
        self.refused = 0  # attempts answered 429/503/529
        self.waited = 0.0  # seconds chosen to wait before retrying those
        self.reason: str | None = None

    def __call__(self, retry_state: RetryCallState) -> bool:
        exc = retry_state.outcome.exception() if retry_state.outcome is not None else None
        if exc is not None and asks_to_wait(exc):
            self.refused += 1
            if self.waited + retry_state.upcoming_sleep > self.wait_cap_s:
                self.reason = "wait"
                return True
            self.waited += retry_state.upcoming_sleep
            return False
        self.failures += 1
        if self.failures > self.max_retries:
            self.reason = "retries"
            return True
        return False


class wait_backoff_or_retry_after(wait_base):
    """Tenacity's wait before the next attempt: what the server asked for (``Retry-After``) plus a jitter of up to
    ``base_s``, else exponential backoff with full jitter."""

    def __init__(self, base_s: float, cap_s: float) -> None:
        self.base_s = base_s
        self.cap_s = cap_s

    def __call__(self, retry_state: RetryCallState) -> float:
        exc = retry_state.outcome.exception() if retry_state.outcome is not None else None
        asked = retry_after(exc) if exc is not None else None
        if asked is not None:
            return asked + random.uniform(0, self.base_s)
        return backoff_delay(retry_state.attempt_number, self.base_s, self.cap_s)


def describe(exc: BaseException) -> str:
    """One line for a failed call: the error type and message, and the cause of a connection error."""
    text = f"{type(exc).__name__}: {exc}"
    cause = exc.__cause__
    if isinstance(exc, ModelConnectionError) and cause is not None:
        text += f" ({type(cause).__name__}: {cause})"
    return text


OnRetry = Callable[[str, BaseException, float], None]
"""Told of every retry: the role, the error that caused it and the wait before it."""


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
        max_retries: int | None = None,
        timeout: float | None = None,
        backoff_s: float = 0.5,
        backoff_cap_s: float = 8.0,
        retry_after_cap_s: float = 60.0,
        rate_limit_wait_s: float | None = None,
        cache: ResponseCache | None = None,
        on_retry: OnRetry | None = None,
    ) -> None:
        """``max_retries`` and ``timeout`` default to the role's own settings (3 retries, no deadline where the role
        sets none); the runner passes its provider's defaults. ``rate_limit_wait_s``: the most a call waits in all
        for a server asking it to wait (``RATE_LIMIT_WAIT_S`` by default)."""
        description = f"{name} played by {model_label or settings.model}"
        if _traced():
            super().__init__(name=name, description=description)
        else:
            # BaseChatAgent.__init__ without the "create_agent" span it opens, which nothing records while no
            # tracer provider is set (tests/agents/
            # test_agent_span.py: the same attributes as autogen's, and the span where a provider is set)
            if not name.isidentifier():
                raise ValueError("The agent name must be a valid Python identifier.")
            self._name = name
            self._description = description
        self.client = client
        self.settings = settings
        self.model_label = model_label or settings.model
        if max_retries is None:
            max_retries = settings.max_retries if settings.max_retries is not None else 3
        self.max_retries = max_retries
        self.timeout = timeout if timeout is not None else settings.timeout
        self.backoff_s = backoff_s
        self.backoff_cap_s = backoff_cap_s
        self.retry_after_cap_s = retry_after_cap_s
        self.rate_limit_wait_s = RATE_LIMIT_WAIT_S if rate_limit_wait_s is None else rate_limit_wait_s
        self.cache = cache
        self.on_retry = on_retry
        self.history: list[LLMMessage] = []
        self.sharing: CallSharing | None = None  # set by the Session that drives this agent
        # The conversation's messages as the request digest writes them, by message (kept with it: an id alone
        # could be a later object's): each turn is encoded once for every call of the conversation that carries it.
        self._encoded: dict[int, tuple[LLMMessage, str]] = {}

    def fork(self, *, keep_history: bool = False) -> ModelAgent:
        """The same role on the same client and settings, with a conversation of its own (a copy of this one's
        with ``keep_history``): a concurrent branch of a session talks to its fork."""
        twin = ModelAgent(
            self.name,
            self.client,
            self.settings,
            model_label=self.model_label,
            max_retries=self.max_retries,
            timeout=self.timeout,
            backoff_s=self.backoff_s,
            backoff_cap_s=self.backoff_cap_s,
            retry_after_cap_s=self.retry_after_cap_s,
            rate_limit_wait_s=self.rate_limit_wait_s,
            cache=self.cache,
            on_retry=self.on_retry,
        )
        twin.sharing = self.sharing
        if keep_history:
            twin.history = list(self.history)
            twin._encoded = dict(self._encoded)
        return twin

    @property
    def produced_message_types(self) -> Sequence[type[BaseChatMessage]]:
        return (TextMessage,)

    async def on_messages(self, messages: Sequence[BaseChatMessage], cancellation_token: CancellationToken) -> Response:
        temperature: float | None = None
        seed: int | None = None
        schema: str | None = None
        samples = 1
        fresh = any(m.metadata.get(FRESH_KEY) for m in messages)
        max_tokens: int | None = None
        if any(m.metadata.get(REASK_KEY) for m in messages) and not fresh:
            # The same request again: the cut-off reply and the messages it answered leave the conversation first.
            del self.history[-(len(messages) + 1) :]
        conversation: list[LLMMessage] = [] if fresh else self.history
        for m in messages:
            text = m.to_model_text()
            if m.metadata.get(ROLE_KEY) == "system":
                conversation.append(SystemMessage(content=text))
            else:
                conversation.append(UserMessage(content=text, source=m.source))
            if TEMPERATURE_KEY in m.metadata:
                temperature = float(m.metadata[TEMPERATURE_KEY])
            if SEED_KEY in m.metadata:
                seed = int(m.metadata[SEED_KEY])
            schema = m.metadata.get(SCHEMA_KEY, schema)
            samples = int(m.metadata.get(SAMPLES_KEY, samples))
            if MAX_TOKENS_KEY in m.metadata:
                max_tokens = int(m.metadata[MAX_TOKENS_KEY])
        args = self.settings.create_args(temperature=temperature, seed=seed)
        if max_tokens is not None:
            args["max_tokens"] = max_tokens
        if schema is not None:
            args["response_format"] = json.loads(schema)
        encoded = message_json if fresh else self._message_json  # a one-off request's messages are not kept
        digest = _digest(self.model_label, conversation, args, encoded)
        start = time.perf_counter()
        key = (
            sharing_key(self.model_label, conversation, args, samples, digest, encoded)
            if self.sharing is not None
            else None
        )
        shared = self.sharing.find(key) if self.sharing is not None and key is not None else None
        retries, requests, cached, coalesced = 0, 0, False, shared is not None
        if shared is not None:
            # shield: a waiter cancelled (its session stopped) must not cancel the request others wait on
            answered = await asyncio.shield(shared)
            replies = [
                r.model_copy(
                    update={"prompt_tokens": 0, "completion_tokens": 0, "cache_read_tokens": 0, "cache_write_tokens": 0}
                )
                for r in answered
            ]
        else:
            claim = self.sharing.claim(key) if self.sharing is not None and key is not None else None
            try:
                replies, cached, retries, requests = await self._replies(
                    conversation, args, digest, samples, cancellation_token
                )
            except BaseException as exc:
                if claim is not None and self.sharing is not None and key is not None:
                    self.sharing.fail(key, claim, exc)
                raise
            if claim is not None:
                claim.set_result(replies)
        first = replies[0]
        if not fresh:
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
            cache_read_tokens=sum(r.cache_read_tokens for r in replies),
            cache_write_tokens=sum(r.cache_write_tokens for r in replies),
            latency_s=round(time.perf_counter() - start, 4),
            retries=retries,
            finish_reason=first.finish_reason,
            cached=cached,
            samples=[r.text for r in replies] if samples > 1 else [],
            enforcement=first.enforcement,
            requests=requests,
            coalesced=coalesced,
            metadata={},  # given, not copied from the field's default (a deep copy each time)
            id=message_id(),
        )
        usage = RequestUsage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
        reply = TextMessage(content=first.text, source=self.name, models_usage=usage, metadata={}, id=message_id())
        return Response(chat_message=reply, inner_messages=[call])

    async def _replies(
        self,
        conversation: list[LLMMessage],
        args: dict[str, Any],
        digest: str,
        samples: int,
        token: CancellationToken,
    ) -> tuple[list[CachedReply], bool, int, int]:
        """The replies from the response cache, else from the model: (replies, cached, retries, requests)."""
        # Each sample has its own cache entry, so a vote is never served one sample k times.
        keys = [digest] + [f"{digest}#{i}" for i in range(1, samples)]
        cache = self.cache if self.cache is not None and cacheable(args) else None
        found = [cache.get(k) for k in keys] if cache is not None else []
        if found and all(r is not None for r in found):
            return [r for r in found if r is not None], True, 0, 0
        done, retries = await self._complete(conversation, args, samples, token)
        limit = max_reply_chars()
        replies = []
        for i, text in enumerate(done.texts):
            # A reply past the cap (a server ignoring max_tokens) is cut before anything keeps it; the cut is
            # noted at its end and as its finish reason.
            kept, cut = cut_reply(text, limit)
            replies.append(
                CachedReply(
                    text=kept,
                    # the request's usage is booked on the first sample
                    prompt_tokens=done.usage.prompt_tokens if i == 0 else 0,
                    completion_tokens=done.usage.completion_tokens if i == 0 else 0,
                    cache_read_tokens=done.cache_read_tokens if i == 0 else 0,
                    cache_write_tokens=done.cache_write_tokens if i == 0 else 0,
                    finish_reason="cut" if cut else done.finish_reason,
                    enforcement=done.enforcement,
                )
            )
        if cache is not None:
            for key, reply in zip(keys, replies, strict=True):
                cache.put(key, reply)
        return replies, False, retries, done.requests

    async def _request(
        self, conversation: list[LLMMessage], args: dict[str, Any], n: int, token: CancellationToken
    ) -> Completion:
        """One call for ``n`` samples: voirdire's clients draw them (and enforce a schema) themselves; any other
        autogen client is asked ``n`` times with the schema left out and its replies validated."""
        if isinstance(self.client, TextOnlyClient):
            return await self.client.complete(conversation, {**args, TIMEOUT_ARG: self.timeout}, n)
        plain = {k: v for k, v in args.items() if k not in ("response_format", "prompt_cache")}  # ours alone
        results = []
        for _ in range(n):
            try:
                results.append(
                    await asyncio.wait_for(
                        self.client.create(conversation, extra_create_args=plain, cancellation_token=token),
                        self.timeout,
                    )
                )
            except TimeoutError as exc:
                if self.timeout is None:
                    raise
                raise ReplyTimeout(f"no reply within {self.timeout:g} s (timeout)") from exc
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

    async def _complete(
        self, conversation: list[LLMMessage], args: dict[str, Any], n: int, token: CancellationToken
    ) -> tuple[Completion, int]:
        """Call the model, retrying transient failures (see the module's retry policy); returns the retry count."""
        try:
            return await self._request(conversation, args, n, token), 0
        except Exception as exc:
            first: Exception | None = exc  # most calls succeed at once: tenacity is set up only for a failure
        stop = stop_after_budget(self.max_retries, self.rate_limit_wait_s)
        retrying = AsyncRetrying(
            retry=retry_if_exception(self._retried),
            stop=stop,
            wait=wait_backoff_or_retry_after(self.backoff_s, self.backoff_cap_s),
            before_sleep=self._before_sleep,
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    if first is not None:  # the first attempt, already made: its failure, to tenacity
                        failed, first = first, None
                        raise failed
                    done = await self._request(conversation, args, n, token)
        except Exception as exc:
            retries = retrying.statistics.get("attempt_number", 1) - 1
            raise ModelCallError(
                f"{self.name} via {self.model_label}: {describe(exc)}{self._why_given_up(exc, retries, stop)}",
                role=self.name,
                retries=retries,
            ) from exc
        return done, retrying.statistics.get("attempt_number", 1) - 1

    def _retried(self, exc: BaseException) -> bool:
        """Whether tenacity may retry ``exc`` (the attempt count is its ``stop``'s to judge)."""
        asked = retry_after(exc)
        return is_transient(exc) and (asked is None or asked <= self.retry_after_cap_s)

    def _before_sleep(self, retry_state: RetryCallState) -> None:
        if self.on_retry is not None and retry_state.outcome is not None and retry_state.next_action is not None:
            exc = retry_state.outcome.exception()
            if exc is not None:
                self.on_retry(self.name, exc, retry_state.next_action.sleep)

    def _why_given_up(self, exc: BaseException, retries: int, stop: stop_after_budget) -> str:
        """What the error message of a call given up on adds: the retries taken, and why it stopped there."""
        after = f" (after {retries} retries)" if retries else ""
        if stop.reason == "wait":
            return (
                f"; the server refused {stop.refused} attempts with HTTP 429/503 (asking to wait) and the next wait "
                f"would take the {stop.waited:.1f} s waited past the most a call waits for a rate limit "
                f"({stop.wait_cap_s:g} s){after}"
            )
        if stop.reason == "retries":
            if not retries:
                return " (not retried: max_retries is 0)"
            if stop.refused:
                return f"{after}; max_retries = {self.max_retries}: {stop.failures} failures other than a rate limit"
            return after
        if not is_transient(exc):
            return after
        cap = self.retry_after_cap_s
        return f"; the server asked to wait {retry_after(exc) or 0:.0f} s (Retry-After), more than {cap:g} s{after}"

    def remember(self, role: str, text: str) -> None:
        """Seed the conversation (e.g. the examinee's own claim) without calling the model."""
        if role == "assistant":
            self.history.append(AssistantMessage(content=text, source=self.name))
        elif role == "system":
            self.history.append(SystemMessage(content=text))
        else:
            self.history.append(UserMessage(content=text, source="moderator"))

    def _message_json(self, m: LLMMessage) -> str:
        """``message_json`` of a message of this conversation, encoded once."""
        kept = self._encoded.get(id(m))
        if kept is not None and kept[0] is m:
            return kept[1]
        text = message_json(m)
        self._encoded[id(m)] = (m, text)
        return text

    async def on_reset(self, cancellation_token: CancellationToken) -> None:
        self.history.clear()
        self._encoded.clear()
