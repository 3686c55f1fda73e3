"""Adaptive concurrency per endpoint: an AIMD limit on the requests in flight to one base URL.

Every request to an endpoint takes a slot (``acquire``) before it is sent and gives it back (``release``) with its
outcome once it is answered or has failed. The limit starts at the endpoint's cap (the size of its HTTP
keep-alive pool: ``voirdire.models.openai``) and moves like TCP's congestion window:

* **multiplicative decrease**: an overload, which only the server can signal (HTTP 429 or 503, or a request *in
  flight* with no reply by its deadline), halves the limit, floor 1. It halves what was really in use: the limit,
  or the requests in flight when that is fewer, since a limit far above what is in flight would throttle nothing.
  At most once per window: the requests already in flight when the limit was cut were sent under the old limit,
  so their overloads (one burst of 429s) are the same signal and cut nothing more; an overload of a request sent
  after the cut cuts again, once a round trip (the smoothed time of a reply) has passed since the cut. Without
  the round trip, a rate-limited server's 429s, answered at once, cut again and again within a few milliseconds,
  before any request sent at the lower limit could show whether it was low enough: the limit fell to 1 instead of
  finding the server's rate.
* **additive increase**: every ``limit`` successful replies of requests sent since the last change (one window's
  worth) raise the limit by 1, back up to the cap.
* other failures (5xx, a dropped connection, a body that is not a chat completion) move nothing.

* **fail fast**: an endpoint that refuses its first ``FAIL_FAST_AFTER`` requests (connection refused, no such
  host, HTTP 401, a redirect) and has answered none is *down*: every request waiting for it, and every later one,
  raises ``EndpointDown`` at once instead of being retried for minutes. One answer ever received turns this off
  (a refusal later in a run is a blip, retried as usual).
* **a hanging endpoint is down too**: one whose first ``FAIL_FAST_AFTER`` requests sent all ran past their
  deadline, and that has sent nothing back at all (no reply, no HTTP error, no dropped connection), is down in the
  same way. Without it, every timeout cut the limit toward 1 and the sessions queued one attempt at a time: 16
  sessions at ``--timeout 1 --max-retries 3`` took 40 s instead of a call's 7.5 s bound. Anything heard from the
  endpoint (a 429 above all: a rate limiter that answers is there) turns this off, so the requests queued behind a
  rate-limited endpoint's 429s are never failed by it.

Time spent waiting for a slot is neither a failure of the request nor a signal of overload: a request's deadline
starts once it has its slot (``voirdire.models.openai``), and the wait is bounded by its session's budget
(``session_timeout``, which cancels the wait), not by one request's timeout.
The retry wait (backoff, Retry-After) happens outside the limiter: a request sleeping before its retry holds no
slot. ``endpoint_limits()`` shows every endpoint's limit and requests in flight, by redacted URL, for a progress
line.
"""

from __future__ import annotations

import asyncio
import enum
from collections import deque

from voirdire.base import EndpointDown, redact_url

FAIL_FAST_AFTER = 3
"""Refusals with no answer before an endpoint counts as down: one refused connection can be a server restarting,
three in a row from the start of a run are a wrong URL or a server that is not running."""


class Outcome(enum.Enum):
    """What a request's answer says about the endpoint's load."""

    OK = "ok"  # a reply: counts toward an increase
    OVERLOAD = "overload"  # HTTP 429 or 503: cut the limit
    TIMEOUT = "timeout"  # no reply in time once sent: cut the limit; is the endpoint hanging?
    REFUSED = "refused"  # connection refused, no such host, HTTP 401, a redirect: is the endpoint there at all?
    OTHER = "other"  # any other answer or failure (a 500, a dropped connection): says nothing about load
    CANCELLED = "cancelled"  # the request was cancelled (its session's budget): says nothing at all


class AdaptiveLimit:
    """An AIMD limit on concurrent requests, at most ``cap``, at least 1; FIFO for the requests that wait.

    Not thread-safe: one event loop uses it (asyncio's own primitives are the same). ``acquire`` returns a ticket
    to give back to ``release``: tickets number the requests in the order they were let through, which is how a
    decrease knows which overloads belong to the window it already reacted to.
    """

    def __init__(self, cap: int, url: str = "") -> None:
        if cap < 1:
            raise ValueError(f"an endpoint's cap must be at least 1, got {cap}")
        self.cap = cap
        self.url = url
        self.answered = 0  # replies ever received
        self.refusals = 0  # refusals while none was answered
        self.heard = False  # anything at all came back (a reply, an HTTP error, a dropped connection)
        self.timeouts = 0  # requests that ran past their deadline while nothing was heard
        self.down: str | None = None  # why the endpoint is down: each request gets an EndpointDown of its own
        self.limit = cap
        self.in_flight = 0
        self.decreases = 0
        self.increases = 0
        self.queued = 0  # requests that had to wait for a slot
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._issued = 0  # tickets handed out so far
        self._cut_at = 0  # requests with a ticket below it were sent before the last cut
        self._successes = 0  # successes since the last change of the limit
        self._sent_at: dict[int, float] = {}  # ticket -> loop time it was let through
        self._cut_time = -float("inf")  # loop time of the last cut
        self.round_trip = 0.0  # smoothed seconds from slot to reply of the requests answered

    async def acquire(self) -> int:
        """Wait for a slot (first come, first served); the ticket to pass to ``release``. Raises ``EndpointDown``
        once the endpoint is down."""
        if self.down is not None:
            raise EndpointDown(self.down)
        if self.in_flight < self.limit and not self._waiters:
            self.in_flight += 1
        else:
            self.queued += 1
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():  # given a slot, then cancelled: pass the slot on
                    self.in_flight -= 1
                    self._wake()
                elif waiter in self._waiters:  # still queued (``_wake`` drops a cancelled waiter it meets)
                    self._waiters.remove(waiter)
                raise
        ticket = self._issued
        self._issued += 1
        self._sent_at[ticket] = asyncio.get_running_loop().time()
        return ticket

    def release(self, ticket: int, outcome: Outcome, cause: str = "") -> None:
        """Give a slot back with what its request's answer says about load (and, for a refusal, its ``cause``)."""
        now = asyncio.get_running_loop().time()
        sent_at = self._sent_at.pop(ticket, now)
        if outcome is Outcome.OK:
            self.answered += 1
            took = now - sent_at  # a smoothed round trip, as TCP's (RFC 6298: gain 1/8)
            self.round_trip = took if self.answered == 1 else self.round_trip + (took - self.round_trip) / 8
        elif outcome is Outcome.REFUSED and not self.answered and self.down is None:
            self.refusals += 1
            if self.refusals >= FAIL_FAST_AFTER:
                self._fail(
                    f"refused its first {self.refusals} requests and answered none ({cause or 'refused'})",
                    "and the URL, model and key are right",
                )
        if outcome is Outcome.TIMEOUT:
            if not self.heard and self.down is None:
                self.timeouts += 1
                if self.timeouts >= FAIL_FAST_AFTER:
                    self._fail(
                        f"sent nothing back to its first {self.timeouts} requests ({cause or 'no reply in time'})",
                        "and not stuck, and that the timeout (--timeout) is long enough for a reply",
                    )
        elif outcome is not Outcome.CANCELLED:
            self.heard = True
        if ticket >= self._cut_at:  # sent since the last cut: its answer is news
            overload = outcome is Outcome.OVERLOAD or outcome is Outcome.TIMEOUT
            if overload and now - self._cut_time >= self.round_trip:
                self.limit = max(1, min(self.limit, self.in_flight) // 2)
                self.decreases += 1
                # Every request in flight now was sent under the old limit: its answer belongs to this cut.
                self._cut_at = self._issued
                self._cut_time = now
                self._successes = 0
            elif outcome is Outcome.OK and self.limit < self.cap:
                self._successes += 1
                if self._successes >= self.limit:  # a window's worth of replies at this limit: one more
                    self.limit += 1
                    self.increases += 1
                    self._successes = 0
        self.in_flight -= 1
        self._wake()

    def _fail(self, what: str, hint: str) -> None:
        where = redact_url(self.url) if self.url else "the endpoint"
        self.down = f"{where} {what}: check that the server is running {hint}"
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():  # a new exception each: one raised again and again grows its traceback each time
                waiter.set_exception(EndpointDown(self.down))

    def _wake(self) -> None:
        while self._waiters and self.in_flight < self.limit:
            waiter = self._waiters.popleft()
            if not waiter.done():  # a cancelled waiter has left (or is leaving) the queue
                self.in_flight += 1
                waiter.set_result(None)


_LIMITS: dict[str, AdaptiveLimit] = {}


def endpoint_limit(base_url: str, cap: int) -> AdaptiveLimit:
    """A new limit for the endpoint at ``base_url``, starting at ``cap``, shown by ``endpoint_limits`` until it is
    forgotten. The endpoint's clients share it (``voirdire.models.openai``); one made for an endpoint again (in a
    new event loop) replaces the last."""
    limit = _LIMITS[base_url] = AdaptiveLimit(cap, base_url)
    return limit


def forget_endpoint(base_url: str, limit: AdaptiveLimit) -> None:
    """Stop showing the endpoint's limit once its clients are closed, unless it has been replaced meanwhile."""
    if _LIMITS.get(base_url) is limit:
        del _LIMITS[base_url]


def endpoint_limits() -> dict[str, tuple[int, int]]:
    """Every endpoint in use: its URL (redacted: no credentials, no query) -> (current limit, requests in flight).
    Two URLs that differ only in what redaction drops are shown as one, their limits and requests added."""
    shown: dict[str, tuple[int, int]] = {}
    for url, limit in list(_LIMITS.items()):
        label = redact_url(url)
        before = shown.get(label, (0, 0))
        shown[label] = (before[0] + limit.limit, before[1] + limit.in_flight)
    return shown
