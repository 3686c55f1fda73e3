"""The HTTP under voirdire's model clients: one keep-alive pool of ``size`` connections that POSTs a body and reads
the answer's body only up to a cap. Two mature libraries can carry it, by ``VOIRDIRE_TRANSPORT``:

* ``aiohttp`` (the default): its HTTP parser is compiled (llhttp), a connector of any size costs O(1) a request
  (``bench/transport.py`` compares the two);
* ``httpx``: the library the openai SDK is built on (httpx2 for openai 3), today's path before aiohttp.

Both behave alike where voirdire's fault rules need it (``voirdire.models.openai`` applies the rules): redirects
are never followed (a 3xx is handed back unread, for the caller to refuse), a body is read streamed and reading
stops (and the connection is closed) past the cap, no cookie is kept, proxies come from ``HTTP_PROXY`` /
``HTTPS_PROXY`` / ``ALL_PROXY`` / ``NO_PROXY`` and nothing else from the environment is trusted (aiohttp's
``trust_env`` would add ``~/.netrc`` credentials to requests), and every failure is one of ``timeout_errors()``,
``refused_errors()`` (nothing listening, no such host, a TLS handshake refused) or ``connection_errors()``.
"""

from __future__ import annotations

import functools
import os
import ssl
import urllib.request
from dataclasses import dataclass
from typing import Any, Protocol

TRANSPORT_ENV = "VOIRDIRE_TRANSPORT"
TRANSPORTS = ("aiohttp", "httpx")
CONNECT_TIMEOUT_S = 10.0
READ_CHUNK = 65_536


@dataclass
class Answer:
    """An HTTP answer: status, reason phrase, headers (names in lower case; only for a redirect or an error, the
    answers whose headers are read: a 2xx answer's are not copied) and body (None: longer than the cap, reading
    stopped there; empty for a redirect, which is not read)."""

    status: int
    reason: str
    headers: dict[str, str]
    body: bytes | None


class Pool(Protocol):
    async def post(
        self, url: str, content: bytes, headers: dict[str, str], deadline: float, cap: int, error_cap: int
    ) -> Answer: ...

    async def close(self) -> None: ...


def transport_name() -> str:
    """The HTTP library chosen: ``VOIRDIRE_TRANSPORT`` when set, else aiohttp."""
    raw = os.environ.get(TRANSPORT_ENV, "").strip().lower() or TRANSPORTS[0]
    if raw not in TRANSPORTS:
        from voirdire.models.base import ModelSpecError

        raise ModelSpecError(f"{TRANSPORT_ENV}={raw!r}: expected one of {', '.join(TRANSPORTS)}")
    return raw


def new_pool(size: int, tls: ssl.SSLContext) -> Pool:
    """A pool of ``size`` kept-alive connections on the chosen library."""
    return AiohttpPool(size, tls) if transport_name() == "aiohttp" else HttpxPool(size, tls)


def pool_size(cap: int, shard: int) -> int:
    """Connections per pool of an endpoint's: httpx's pool walks its connections twice a request, so an endpoint's
    ``cap`` is split into pools of ``shard``; aiohttp's connector does not, so one pool holds them all."""
    return cap if transport_name() == "aiohttp" else min(cap, shard)


def env_proxy(url: str) -> str | None:
    """The proxy the environment names for ``url`` (``NO_PROXY`` respected), as httpx reads it; None for none."""
    scheme, _, rest = url.partition("://")
    host = rest.split("/", 1)[0].rsplit("@", 1)[-1]
    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(scheme.lower()) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass_environment(host.rsplit(":", 1)[0].strip("[]"), proxies):
        return None
    return proxy if "://" in proxy else f"http://{proxy}"


def _lower(headers: Any) -> dict[str, str]:
    return {name.lower(): value for name, value in headers.items()}


# ------------------------------------------------------------------------------------------------ aiohttp


class AiohttpPool:
    """One ``aiohttp.ClientSession`` on a connector of ``size`` connections."""

    def __init__(self, size: int, tls: ssl.SSLContext) -> None:
        import aiohttp

        self._aiohttp = aiohttp
        connector = aiohttp.TCPConnector(limit=size, limit_per_host=0, ssl=tls, keepalive_timeout=60)
        self.session = aiohttp.ClientSession(
            connector=connector, cookie_jar=aiohttp.DummyCookieJar(), trust_env=False, auto_decompress=True
        )
        self._timeouts: dict[float, Any] = {}
        self._urls: dict[str, tuple[Any, str | None]] = {}

    def _target(self, url: str) -> tuple[Any, str | None]:
        found = self._urls.get(url)
        if found is None:  # parsed once: the chat URL is the same for every request of a client
            from yarl import URL

            found = self._urls[url] = (URL(url, encoded=True), env_proxy(url))
        return found

    async def post(
        self, url: str, content: bytes, headers: dict[str, str], deadline: float, cap: int, error_cap: int
    ) -> Answer:
        timeout = self._timeouts.get(deadline)
        if timeout is None:
            # Connecting only: the caller's one deadline for the whole request (``asyncio.timeout_at``, set when the
            # request got its slot) ends the rest, so which of two clocks fired is never in doubt.
            timeout = self._timeouts[deadline] = self._aiohttp.ClientTimeout(
                total=None, sock_connect=min(deadline, CONNECT_TIMEOUT_S)
            )
        target, proxy = self._target(url)
        response = await self.session.post(
            target, data=content, headers=headers, allow_redirects=False, timeout=timeout, proxy=proxy
        )
        try:
            answer_headers = _lower(response.headers) if response.status >= 300 else {}
            if 300 <= response.status < 400:
                return Answer(response.status, response.reason or "", answer_headers, b"")
            body = await self._read(response, error_cap if response.status >= 400 else cap)
        except BaseException:
            response.close()  # the connection is not reused: its state is unknown
            raise
        if body is None:
            response.close()  # past the cap: the connection is closed, the rest never read
        else:
            response.release()
        return Answer(response.status, response.reason or "", answer_headers, body)

    async def _read(self, response: Any, cap: int) -> bytes | None:
        """The body, read chunk by chunk until it ends (None past ``cap``): ``iter_chunked``'s reads without its
        iterator, and no read for the end when the stream has already said it ended (most replies arrive whole)."""
        content = response.content
        content.set_read_chunk_size(READ_CHUNK)
        chunks: list[bytes] = []
        size = 0
        while True:
            try:
                chunk = await content.read(READ_CHUNK)
            except self._aiohttp.EofStream:
                break
            if not chunk:
                break
            size += len(chunk)
            if size > cap:
                return None
            chunks.append(chunk)
            if content.at_eof():
                break
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    async def close(self) -> None:
        await self.session.close()


# ------------------------------------------------------------------------------------------------ httpx


def _httpx() -> Any:
    """httpx2 (openai 3's) where installed, else httpx."""
    try:
        import httpx2

        return httpx2
    except ImportError:  # pragma: no cover - openai < 3
        import httpx

        return httpx


class HttpxPool:
    """One ``httpx.AsyncClient`` of ``size`` connections, every one kept alive (max_keepalive = max_connections:
    requests are capped at the pool's size, so no connection is opened only to be dropped)."""

    def __init__(self, size: int, tls: ssl.SSLContext) -> None:
        http = _httpx()
        self._http = http
        self.client = http.AsyncClient(
            limits=http.Limits(max_connections=size, max_keepalive_connections=size),
            timeout=http.Timeout(30.0, connect=CONNECT_TIMEOUT_S),
            follow_redirects=False,
            verify=tls,
        )
        self._timeouts: dict[float, Any] = {}

    async def post(
        self, url: str, content: bytes, headers: dict[str, str], deadline: float, cap: int, error_cap: int
    ) -> Answer:
        timeout = self._timeouts.get(deadline)
        if timeout is None:
            timeout = self._timeouts[deadline] = self._http.Timeout(
                deadline, connect=min(deadline, CONNECT_TIMEOUT_S)
            )
        request = self.client.build_request("POST", url, content=content, headers=headers, timeout=timeout)
        response = await self.client.send(request, stream=True)
        try:
            answer_headers = _lower(response.headers) if response.status_code >= 300 else {}
            if 300 <= response.status_code < 400:
                return Answer(response.status_code, response.reason_phrase, answer_headers, b"")
            body = await self._read(response, error_cap if response.status_code >= 400 else cap)
            return Answer(response.status_code, response.reason_phrase, answer_headers, body)
        finally:
            await response.aclose()  # past the cap: the connection is closed, the rest never read

    @staticmethod
    async def _read(response: Any, cap: int) -> bytes | None:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > cap:
                return None
            chunks.append(chunk)
        return b"".join(chunks)

    async def close(self) -> None:
        await self.client.aclose()


# ------------------------------------------------------------------------------------------------ errors


@functools.cache
def timeout_errors() -> tuple[type[BaseException], ...]:
    """A deadline passed inside the library (aiohttp raises the builtin TimeoutError)."""
    return (_httpx().TimeoutException, TimeoutError)


@functools.cache
def refused_errors() -> tuple[type[BaseException], ...]:
    """No connection could be made: refused, no such host, a TLS handshake failed."""
    import aiohttp

    return (_httpx().ConnectError, aiohttp.ClientConnectorError)


@functools.cache
def connection_errors() -> tuple[type[BaseException], ...]:
    """Anything else that left a request without a whole answer: reset, dropped, a body cut off, an answer that is
    not HTTP. anyio's EndOfStream and ssl errors can escape httpx2 unmapped."""
    import aiohttp
    import anyio

    return (_httpx().RequestError, aiohttp.ClientError, ssl.SSLError, anyio.EndOfStream, ConnectionError)
