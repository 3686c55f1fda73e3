"""OpenAI and OpenAI-compatible servers (vLLM, Ollama, llama.cpp server, ...): voirdire's own lean client.

A client of voirdire's own rather than AutoGen's, because the protocols need what AutoGen's client refuses: ``n``
samples in one request, and a reply schema sent as ``response_format`` with a clean fallback. Both are learnt
once per endpoint: a server that answers a ``response_format`` request with HTTP 400 is asked in text from then
on (the reply is still validated), and one that returns fewer choices than ``n`` gets one request per sample.

**Transport.** Every client of one endpoint (base URL) in the process shares its HTTP/1.1 keep-alive connections
(``_Endpoint``): at most ``max_connections()`` of them (``VOIRDIRE_MAX_CONNECTIONS``, default
``DEFAULT_MAX_CONNECTIONS``), every one kept alive, and the requests in flight to the endpoint are capped at that
number by its adaptive limit (``voirdire.models.limiter``), so no connection is ever opened only to be dropped.
The connections are held in pools (``_Shard``) of ``voirdire.models.transport``: one aiohttp connector for all
of them by default, or, with ``VOIRDIRE_TRANSPORT=httpx``, httpx pools of ``POOL_SHARD`` (an httpx pool's
bookkeeping walks all its connections twice a request, which at 200 connections in one pool was a third of the
client's CPU; docs/transport.md), a request going to the first pool with a connection free. A request is a plain
POST on that pool: the body ``json.dumps``, the reply ``json.loads`` and checked here, without the openai SDK's request
building and pydantic reply models (a third of the CPU per call of the SDK on the same pools). Failures are
voirdire's own errors (``voirdire.models.base``): an HTTP error answer is ``ModelHTTPError`` (``TransientHTTPError``
for 408, 409, 429 and 5xx, with the server's headers for ``Retry-After``), a broken connection
``ModelConnectionError``; the retry policy (``voirdire.agents.model_agent``) reads only those.

Every request has a deadline (``TIMEOUT_ARG`` in the call's arguments, else the client's ``timeout``) that starts
when it has a slot at the endpoint's limit: time queued for a slot is not the server's (it is bounded by the
session's budget instead). Connecting may take at most ``CONNECT_TIMEOUT_S`` of it, and a request with no complete
reply by then raises ``ReplyTimeout``. The body of a reply is read only up to ``reply_byte_cap`` bytes.
A refused connection and HTTP 401 are refusals: an endpoint that gives
nothing else stops the run at once (``EndpointDown``, ``voirdire.models.limiter``). An HTTP 200 that is not a chat
completion (a body cut off, not JSON, no choices) raises ``InvalidReply``. An endpoint whose first requests all
ran past their deadline with nothing sent back is down too (a hanging server: ``voirdire.models.limiter``).
A timeout and a reply that is not a chat completion are transient: the role's agent retries them, and counts every
attempt.

The API key is the caller's: ``openai_client`` and ``openai_compatible_client`` take it already resolved (see
``voirdire.models.spec.resolve_api_key``); a server that needs none is sent a placeholder, never another
endpoint's key. Keys travel per request, never as a pool's default headers, so clients with different keys can
share an endpoint's connections.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.metadata
import json
import math
import os
import ssl
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring
from typing import Any, ClassVar
from urllib.parse import urljoin

from autogen_core.models import CreateResult, LLMMessage, RequestUsage

from voirdire.base import MAX_REPLY_CHARS_ENV, TOKEN_COUNT_MAX, max_reply_chars, redact_url, token_count
from voirdire.models.base import (
    OVERLOAD_STATUS,
    TIMEOUT_ARG,
    Completion,
    InvalidReply,
    ModelConnectionError,
    ModelHTTPError,
    ModelSpecError,
    ReplyTimeout,
    TextOnlyClient,
    http_error,
    openai_role,
    text_of,
)
from voirdire.models.limiter import AdaptiveLimit, Outcome, endpoint_limit, forget_endpoint
from voirdire.models.transport import (
    Answer,
    Pool,
    connection_errors,
    new_pool,
    pool_size,
    refused_errors,
    timeout_errors,
    transport_name,
)

# Generation settings passed through to the API; anything else in a role's arguments is voirdire's own.
_SENT = ("max_tokens", "temperature", "seed", "top_p", "stop")
CHAT_TIMEOUT_S = 30.0
"""The default deadline of one chat request: a bounded reply (256 tokens unless set) from a hosted model comes well
within it; a slow local server needs a larger per-role ``timeout``."""
NO_KEY = "not-needed"
"""Sent where a server needs no key: servers that check for one get a placeholder, and no real key goes where it
was not named."""
OPENAI_URL = "https://api.openai.com/v1"

REFUSING_STATUS = frozenset({401})
"""Answers that say the endpoint will not serve this client at all (a bad key): refusals, which stop a run at once
when an endpoint gives nothing else (``voirdire.models.limiter``). A 403 or 404 is not one: a content filter or a
deployment missing for one model refuses some items only, and three of them at the start of a run said nothing
about the rest; each is its session's error, and ``--max-errors`` stops a run where every call gets one."""
MAX_CONNECTIONS_ENV = "VOIRDIRE_MAX_CONNECTIONS"
DEFAULT_MAX_CONNECTIONS = 256
"""Connections per endpoint, all kept alive, and so the most requests in flight to it: a run of up to 256 sessions
at a time is never held back by it (a model's latency, seconds, not the client's CPU, bounds such a run). A pool
opens connections only as requests need them."""
POOL_SHARD = 16
"""Connections per httpx pool of an endpoint's: 16 cost 0.50 ms CPU a call at 200 in flight, one pool of 256 0.76
ms. aiohttp's connector has no such cost: one pool holds the endpoint's connections (``transport.pool_size``)."""


def max_connections() -> int:
    """Connections (and requests in flight) per endpoint: ``VOIRDIRE_MAX_CONNECTIONS``, else the default."""
    raw = os.environ.get(MAX_CONNECTIONS_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_CONNECTIONS
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ModelSpecError(f"{MAX_CONNECTIONS_ENV}={raw!r}: expected a whole number of connections, at least 1")
    return value


def _http() -> Any:
    """The HTTP library the installed openai SDK is built on (httpx2 for openai 3, httpx before): a dependency that
    is there anyway."""
    try:
        import httpx2

        return httpx2
    except ImportError:  # pragma: no cover - openai < 3
        import httpx

        return httpx


class _Endpoint:
    """One base URL's connection pool and adaptive limit, shared by every client of it within one event loop (an
    HTTP pool's connections belong to the loop that opened them)."""

    def __init__(self, url: str, cap: int, loop: asyncio.AbstractEventLoop) -> None:
        self.url = url
        self.loop = loop
        self.users = 0
        self.cap = cap
        self.shard_size = pool_size(cap, POOL_SHARD)
        self.shards: list[_Shard] = []
        self.limit: AdaptiveLimit = endpoint_limit(url, cap)

    def take(self) -> _Shard:
        """A pool with a connection free for one more request: the first one that has one, so the load stays on
        as few pools (and warm connections) as it needs. The endpoint's limit keeps the requests in flight at most
        ``cap``, so there always is one."""
        for shard in self.shards:
            if shard.in_flight < self.shard_size:
                shard.in_flight += 1
                return shard
        shard = _Shard(self.shard_size)
        self.shards.append(shard)
        shard.in_flight += 1
        return shard

    async def close(self) -> None:
        forget_endpoint(self.url, self.limit)
        if _ENDPOINTS.get(self.url) is self:
            del _ENDPOINTS[self.url]
        for shard in self.shards:
            await shard.pool.close()


class _Shard:
    """One HTTP/1.1 keep-alive pool of an endpoint's (``voirdire.models.transport``): ``size`` connections, every
    one of them kept alive, and the requests in flight on it. Requests are capped at the pool's size
    (``_Endpoint.take``), so a connection is never opened only to be dropped. Redirects are never followed: a key
    header travels with a followed request (HTTP libraries strip Authorization across hosts, not x-api-key or
    api-key), so a redirect is an error naming its target (``_redirect_error``), for every provider alike."""

    def __init__(self, size: int) -> None:
        self.in_flight = 0
        self.pool: Pool = new_pool(size, tls_context())


_ENDPOINTS: dict[str, _Endpoint] = {}


@dataclass
class _Reply:
    texts: list[str]
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    cache_read: int = 0  # of the prompt tokens: read from the provider's prompt cache
    cache_write: int = 0  # of the prompt tokens: written to it


class OpenAIChatClient(TextOnlyClient):
    """Chat completions at ``base_url`` (OpenAI's own when None) with model ``model``."""

    enforces = "response_format"
    # What each endpoint has shown it cannot do, shared by every client of the process.
    _no_response_format: ClassVar[set[str]] = set()
    _no_n: ClassVar[set[str]] = set()

    def __init__(self, model: str, *, base_url: str | None, api_key: str, timeout: float = CHAT_TIMEOUT_S) -> None:
        super().__init__()
        self.model = model
        self.endpoint = base_url or OPENAI_URL
        self.timeout = timeout
        self._cap = max_connections()
        transport_name()  # a bad VOIRDIRE_TRANSPORT stops the command here, before anything runs
        self._create_args = {"model": model}  # read by client labels
        self._url = _chat_url(self.endpoint)
        self._headers = _headers(api_key)
        self._endpoint: _Endpoint | None = None

    def _attach(self) -> _Endpoint:
        """The endpoint's shared pool and limit in the running loop; made by the first client that sends."""
        loop = asyncio.get_running_loop()
        mine = self._endpoint
        if mine is not None and mine.loop is loop:
            return mine
        if mine is not None:  # used in an earlier event loop, now gone: its pool cannot serve this one
            mine.users -= 1
        shared = _ENDPOINTS.get(self.endpoint)
        if shared is None or shared.loop is not loop:
            shared = _ENDPOINTS[self.endpoint] = _Endpoint(self.endpoint, self._cap, loop)
        shared.users += 1
        self._endpoint = shared
        return shared

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

    async def _send(self, body: dict[str, Any], timeout: float | None = None) -> _Reply:
        """One request, through the endpoint's limit; its reply checked to be a chat completion with choices."""
        endpoint = self._attach()
        deadline = timeout or self.timeout
        # The deadline starts once the request has its slot: a wait in voirdire's own queue is not the server's
        # slowness, so it neither fails the request nor cuts the limit (it did: at --timeout 2, requests queued
        # behind 429s timed out unsent, each timeout cut the limit again, and 769 of 1,000 sessions failed). The
        # wait is bounded by the session's budget (session_timeout cancels it), not by one request's timeout.
        ticket = await endpoint.limit.acquire()
        expires = asyncio.get_running_loop().time() + deadline
        shard = endpoint.take()
        outcome, cause = Outcome.CANCELLED, ""  # until the request ends some other way
        try:
            try:
                async with asyncio.timeout_at(expires):
                    reply = await self._post(shard, body, deadline)
            except TimeoutError as exc:  # the deadline, or the HTTP library's own timeout (re-raised by _post)
                timed_out = ReplyTimeout(f"no complete reply within {deadline:g} s (timeout)")
                outcome, cause = Outcome.TIMEOUT, f"{type(timed_out).__name__}: {timed_out}"
                raise timed_out from exc
            except ModelHTTPError as exc:
                outcome = Outcome.OTHER
                if exc.status_code in OVERLOAD_STATUS:
                    outcome = Outcome.OVERLOAD
                elif exc.status_code in REFUSING_STATUS or exc.code == REDIRECT_CODE:  # the next call fares no better
                    outcome, cause = Outcome.REFUSED, str(exc)
                raise
            except ModelConnectionError as exc:
                outcome = Outcome.OTHER
                if isinstance(exc.__cause__, refused_errors()):  # refused, or no such host: nothing listening
                    outcome, cause = Outcome.REFUSED, f"{type(exc.__cause__).__name__}: {exc.__cause__}"
                raise
            except Exception:  # a reply that is not a chat completion: the endpoint answered
                outcome = Outcome.OTHER
                raise
            outcome = Outcome.OK
            return reply
        finally:
            shard.in_flight -= 1
            endpoint.limit.release(ticket, outcome, cause)

    async def _post(self, shard: _Shard, body: dict[str, Any], deadline: float) -> _Reply:
        """POST the body on one of the endpoint's pools and read the chat completion."""
        return _read_completion(await self._post_json(shard, body, deadline))

    reply_name = "chat completion"  # what a body that is not JSON is said not to be

    async def _post_json(self, shard: _Shard, body: dict[str, Any], deadline: float) -> Any:
        """POST the body on one of the endpoint's pools; the decoded JSON reply, or voirdire's error for what went
        wrong."""
        cap = reply_byte_cap(int(body.get("n") or 1))
        try:
            # Streamed, so the body is read only up to its cap: a server that ignores max_tokens (or never ends its
            # body) costs at most the cap in memory, never the whole of what it sends.
            answer = await shard.pool.post(self._url, _encode(body), self._headers, deadline, cap, ERROR_BODY_BYTES)
        except timeout_errors() as exc:
            raise TimeoutError(str(exc)) from exc
        except connection_errors() as exc:  # refused, reset, dropped, a body cut off mid-transfer
            raise ModelConnectionError(f"no answer from {redact_url(self.endpoint)}") from exc
        if 300 <= answer.status < 400:
            raise _redirect_error(answer, self._url)
        if answer.status >= 400:
            raise _status_error(answer, answer.body)
        content = answer.body
        if content is None:
            raise InvalidReply(
                f"HTTP 200 whose body runs to more than {cap:,} bytes, more than {MAX_REPLY_CHARS_ENV}="
                f"{max_reply_chars():,} characters can take: stopped reading it and closed the connection"
            )
        try:
            return _loads(content)
        except ValueError as exc:  # not JSON, or not text at all (UnicodeDecodeError)
            raise InvalidReply(f"HTTP 200 whose body is not a JSON {self.reply_name} ({type(exc).__name__})") from exc

    async def complete(self, messages: Sequence[LLMMessage], args: Mapping[str, Any], n: int = 1) -> Completion:
        timeout = args.get(TIMEOUT_ARG)
        schema = bool(args.get("response_format")) and self.endpoint not in self._no_response_format
        enforcement = None
        if args.get("response_format"):
            enforcement = "response_format" if schema else "text-fallback"
        want = n if self.endpoint not in self._no_n else 1
        requests = 1
        try:
            reply = await self._send(self._request(messages, args, want, schema), timeout)
        except ModelHTTPError as exc:
            if not schema or exc.status_code != 400:
                raise
            self._no_response_format.add(self.endpoint)  # refused once: ask in text from now on, and read it
            enforcement, requests = "text-fallback", 2
            reply = await self._send(self._request(messages, args, want, False), timeout)
        texts = reply.texts
        prompt_tokens, completion_tokens = reply.prompt_tokens, reply.completion_tokens
        cache_read, cache_write = reply.cache_read, reply.cache_write
        if n > 1 and len(texts) < n:
            if want > 1:
                self._no_n.add(self.endpoint)  # the endpoint ignored n: one request per sample from now on
            while len(texts) < n:
                more = await self._send(
                    self._request(messages, args, 1, schema and enforcement != "text-fallback"), timeout
                )
                requests += 1
                texts.append(more.texts[0])
                prompt_tokens += more.prompt_tokens
                completion_tokens += more.completion_tokens
                cache_read, cache_write = cache_read + more.cache_read, cache_write + more.cache_write
        usage = RequestUsage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
        self._usage = RequestUsage(
            prompt_tokens=self._usage.prompt_tokens + prompt_tokens,
            completion_tokens=self._usage.completion_tokens + completion_tokens,
        )
        return Completion(
            texts=texts[:n], usage=usage, finish_reason=reply.finish_reason, enforcement=enforcement, requests=requests,
            cache_read_tokens=cache_read, cache_write_tokens=cache_write,
        )  # fmt: skip

    async def _complete(self, messages: Sequence[LLMMessage], args: Mapping[str, Any]) -> CreateResult:
        done = await self.complete(messages, args, 1)
        finish = done.finish_reason if done.finish_reason in ("stop", "length") else "unknown"
        return CreateResult(finish_reason=finish, content=done.texts[0], usage=done.usage, cached=False)  # type: ignore[arg-type]

    async def close(self) -> None:
        """Let go of the endpoint; the last client of it closes its pool."""
        endpoint, self._endpoint = self._endpoint, None
        if endpoint is None:
            return
        endpoint.users -= 1
        if endpoint.users <= 0 and endpoint.loop is asyncio.get_running_loop():
            await endpoint.close()


def _read_completion(data: Any) -> _Reply:
    """A chat completion's texts, finish reason and usage; ``InvalidReply`` for JSON that is not one."""
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices:
        raise InvalidReply("HTTP 200 whose body is not a chat completion (no choices)")
    texts = []
    for choice in choices:
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            raise InvalidReply("HTTP 200 with a choice that has no message")
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            raise InvalidReply(f"HTTP 200 with a message whose content is not text ({type(content).__name__})")
        texts.append((content or "").strip())
    usage = data.get("usage")
    prompt_tokens = completion_tokens = 0
    if isinstance(usage, dict):
        counts = [token_count(usage.get(name) or 0) for name in ("prompt_tokens", "completion_tokens")]
        if counts[0] is None or counts[1] is None:
            raise InvalidReply(f"HTTP 200 with usage counts that are not whole numbers from 0 to {TOKEN_COUNT_MAX:,}")
        prompt_tokens, completion_tokens = counts[0], counts[1]
        cached = cached_tokens(usage)
        if cached is None:
            raise InvalidReply(
                "HTTP 200 with usage.prompt_tokens_details.cached_tokens that is not a whole number from 0 to the "
                "prompt tokens"
            )
        cache_read = min(cached, prompt_tokens)
    finish = choices[0].get("finish_reason")
    return _Reply(
        texts=texts,
        finish_reason=finish if isinstance(finish, str) else None,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        cache_read=cache_read if isinstance(usage, dict) else 0,
    )


def cached_tokens(usage: dict[str, Any]) -> int | None:
    """OpenAI's automatic prompt cache: ``usage.prompt_tokens_details.cached_tokens``, the prompt tokens read from
    it (billed at the cached-input rate); 0 when the server does not say; None for a count that is not one."""
    details = usage.get("prompt_tokens_details")
    if not isinstance(details, dict):
        return 0
    return token_count(details.get("cached_tokens") or 0)


def _chat_url(base_url: str) -> str:
    """Where chat completions are posted: ``chat/completions`` under the base URL's path, its query string kept
    (``?api-version=...``). The SDK appends the path after the query instead, which garbles the request."""
    url = _http().URL(base_url)
    path = url.raw_path.partition(b"?")[0]
    return str(
        url.copy_with(raw_path=path.rstrip(b"/") + b"/chat/completions" + (b"?" + url.query if url.query else b""))
    )


def _headers(api_key: str) -> dict[str, str]:
    """A direct request's headers: the SDK's authorization and content headers (organisation and project too when
    set, as the SDK sends them), without its telemetry headers."""
    headers = {
        "Authorization": f"Bearer {api_key}",
        "Accept": "application/json",
        "Content-Type": "application/json",
        "User-Agent": f"voirdire (openai/{_sdk_version()})",
    }
    organization, project = os.environ.get("OPENAI_ORG_ID"), os.environ.get("OPENAI_PROJECT_ID")
    if organization:
        headers["OpenAI-Organization"] = organization
    if project:
        headers["OpenAI-Project"] = project
    return headers


REDIRECT_CODE = "redirect"
"""The ``code`` of the error for a redirect answer: a refusal like a 401, since every call to that URL gets one."""


def _redirect_error(response: Answer, url: str) -> ModelHTTPError:
    """The error for a 3xx answer: never followed (a model call carries its key), the target named redacted (no
    credentials, no query string), not retried (the next attempt is redirected too)."""
    location = response.headers.get("location") or ""
    try:
        target = redact_url(urljoin(url, location)) if location else "nowhere named (no Location header)"
    except ValueError:  # a Location urllib cannot split (a bad port, an unclosed [)
        target = "a URL that is not valid"
    return http_error(
        response.status,
        f"redirected to {target}; not followed: a model call's redirect would carry its key elsewhere. If that "
        "is where the model is, put that URL in the model spec",
        code=REDIRECT_CODE,
        headers={},
    )


REPLY_BYTES_PER_CHAR = 12
"""Bytes of JSON one character of a reply can take: a character beyond the BMP written as two ``\\uXXXX``
escapes. A body longer than that many bytes per allowed character cannot hold a reply within the cap."""
REPLY_OVERHEAD_BYTES = 65_536
"""Room for what a reply's JSON holds beside its text (ids, usage, a tool call's keys)."""
ERROR_BODY_BYTES = 65_536
"""The most of an HTTP error answer's body read: its message is cut to a line anyway."""


def reply_byte_cap(n: int = 1) -> int:
    """The most bytes of a reply body read for ``n`` samples: ``VOIRDIRE_MAX_REPLY_CHARS`` characters each, at the
    most bytes JSON spends on a character, plus the JSON around them. The default cap (100,000) gives 1.27 MB."""
    return REPLY_BYTES_PER_CHAR * max_reply_chars() * max(1, n) + REPLY_OVERHEAD_BYTES


def _status_error(response: Answer, content: bytes | None) -> ModelHTTPError:
    """The error for an HTTP error answer: the server's ``error.message`` and ``error.code`` when its body is the
    OpenAI error object, else the start of the body, else the status's reason. ``content``: the body, None when it
    was longer than was read."""
    message, code = "", None
    content = content or b""
    try:
        data = json.loads(content)
    except ValueError:
        data = None
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        message = str(error.get("message") or "")
        code = error.get("code") if isinstance(error.get("code"), str) else None
    elif isinstance(error, str):
        message = error
    if not message:
        message = content[:200].decode("utf-8", "replace").strip() or response.reason
    return http_error(response.status, " ".join(message.split()), code=code, headers=response.headers)


@functools.cache
def tls_context() -> ssl.SSLContext:
    """One verifying TLS context (the HTTP library's default: certifi's CAs) for every pool of the process: building
    one reads the CA bundle, 15-80 ms, and an endpoint of 256 connections has 16 pools."""
    return _http().create_ssl_context()  # type: ignore[no-any-return]


@functools.cache
def _sdk_version() -> str:
    return importlib.metadata.version("openai")


_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
"""The SDK's body encoding (httpx's ``json.dumps`` settings), one encoder for every request."""


@functools.cache
def _orjson() -> Any:
    """orjson (a declared dependency), else None where an install left it out: the standard library does it all."""
    try:
        import orjson
    except ImportError:  # pragma: no cover - a dependency of the package
        return None
    return orjson


def _plain_messages(messages: object) -> bool:
    """Chat messages of text only: a list of dicts of ``str`` to ``str`` (no subclass, no number, no part list)."""
    if type(messages) is not list:
        return False
    for m in messages:
        if type(m) is not dict:
            return False
        for k, v in m.items():
            if type(k) is not str or type(v) is not str:
                return False
    return True


def _encode(body: dict[str, Any]) -> bytes:
    """The request body as the SDK (through httpx) would write it: compact, UTF-8, no NaN. The messages, where they
    are text only, are written by orjson, whose output for strings is byte for byte the standard library's with
    these settings (every code point; tests/models/test_body_bytes.py) at a twentieth of the CPU; the rest (numbers,
    a reply schema) by the standard library, whose number formats orjson's differ from (``1e-07`` / ``1e-7``)."""
    fast = _orjson()
    messages = body.get("messages")
    if fast is None or not _plain_messages(messages) or not all(type(key) is str for key in body):
        return _JSON.encode(body).encode("utf-8")
    try:
        written = fast.dumps(messages)
    except TypeError:  # text that is not UTF-8 (a lone surrogate): the standard library's error, as before
        return _JSON.encode(body).encode("utf-8")
    # The other members written as text around the messages' bytes, each side encoded once (not a bytes piece per
    # member); the same bytes as encoding the whole body.
    head, tail, side = ["{"], [], None
    for key, value in body.items():
        if key == "messages":
            head.append('"messages":')
            side = tail
        elif side is None:
            head.append(f"{encode_basestring(key)}:{_json_value(value)},")
        else:
            side.append(f",{encode_basestring(key)}:{_json_value(value)}")
    tail.append("}")
    return "".join(head).encode("utf-8") + written + "".join(tail).encode("utf-8")


def _json_value(value: object) -> str:
    """``_JSON.encode(value)``; a string, a whole number or a finite float written directly, as the encoder writes
    one (``encode_basestring``, ``int.__repr__``, ``float.__repr__``), without the encoder's set-up per value."""
    kind = type(value)
    if kind is str:
        return encode_basestring(value)  # type: ignore[no-any-return]
    if kind is int:
        return int.__repr__(value)  # type: ignore[arg-type]
    if kind is float and math.isfinite(value):  # type: ignore[arg-type]
        return float.__repr__(value)  # type: ignore[arg-type]
    return _JSON.encode(value)


def _loads(content: bytes) -> Any:
    """A reply body's JSON, as ``json.loads`` reads it: by orjson where it can (a third of the CPU), else by the
    standard library, which also reads what orjson refuses (UTF-16, a BOM, ``NaN``, numbers past 64 bits, lone
    surrogates) or raises its own error for what is not JSON."""
    fast = _orjson()
    if fast is not None:
        try:
            return fast.loads(content)
        except ValueError:
            pass
    return json.loads(content)


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


def preload_http() -> None:
    """Import what a process's first model request imports (aiohttp and yarl, the SDK's HTTP library and anyio for
    the error types) and build the process's one TLS context, where a run is about to fork workers: each fork then
    has them rather than importing them and reading the CA bundle again."""
    import aiohttp  # noqa: F401
    import yarl  # noqa: F401

    tls_context()
    timeout_errors()
    refused_errors()
    connection_errors()
