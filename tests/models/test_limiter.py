"""The per-endpoint AIMD limit: halves on overload once per window, floor 1; grows by 1 per window of replies up
to its cap; never lets more requests through than its limit; waiters are served in order and a cancelled one
keeps no slot. No clock: the tests drive the requests' ends themselves."""

from __future__ import annotations

import asyncio
import random

import pytest

from voirdire.models.limiter import AdaptiveLimit, Outcome, endpoint_limit, endpoint_limits, forget_endpoint


async def fill(limit: AdaptiveLimit, n: int) -> list[int]:
    """``n`` requests let through at once (the limit must have room for them)."""
    tickets = [await limit.acquire() for _ in range(n)]
    assert limit.in_flight == n
    return tickets


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_it_starts_at_its_cap_and_holds_requests_beyond_it() -> None:
    limit = AdaptiveLimit(3)
    tickets = await fill(limit, 3)
    fourth = asyncio.ensure_future(limit.acquire())
    await settle()
    assert not fourth.done() and limit.queued == 1
    limit.release(tickets[0], Outcome.OK)
    assert await fourth == 3 and limit.in_flight == 3


async def test_an_overload_halves_what_is_in_use() -> None:
    limit = AdaptiveLimit(16)
    tickets = await fill(limit, 10)
    limit.release(tickets[0], Outcome.OVERLOAD)
    # 10 were in flight: half of that, not half of a cap of 16 that nothing used
    assert (limit.limit, limit.in_flight, limit.decreases) == (5, 9, 1)
    full = AdaptiveLimit(8)
    tickets = await fill(full, 8)
    full.release(tickets[0], Outcome.OVERLOAD)
    assert full.limit == 4


async def test_a_burst_of_overloads_cuts_once_per_window() -> None:
    limit = AdaptiveLimit(16)
    tickets = await fill(limit, 12)
    for ticket in tickets:  # one burst of 429s: all sent under the old limit
        limit.release(ticket, Outcome.OVERLOAD)
    assert (limit.limit, limit.decreases, limit.in_flight) == (6, 1, 0)
    late = await limit.acquire()  # sent after the cut: its overload is a new signal
    limit.release(late, Outcome.OVERLOAD)
    assert (limit.limit, limit.decreases) == (1, 2)  # half of the one request in flight, floor 1


async def test_overloads_answered_at_once_cut_again_only_after_a_round_trip() -> None:
    """A rate limit's 429s come back at once: those of requests sent after a cut but within one round trip of it
    (the smoothed time of a reply) cannot yet show whether the lower limit is low enough, so they cut nothing more;
    they used to cut again and again, and a token bucket's 429s drove the limit to 1."""
    limit = AdaptiveLimit(64)
    tickets = await fill(limit, 40)
    limit.release(tickets[0], Outcome.OVERLOAD)
    assert (limit.limit, limit.decreases) == (20, 1)
    for ticket in tickets[1:]:
        limit.release(ticket, Outcome.OK)
    limit.round_trip = 3600.0  # replies take an hour: no round trip passes while this test runs
    late = [await limit.acquire() for _ in range(10)]  # sent after the cut, refused at once
    for ticket in late:
        limit.release(ticket, Outcome.OVERLOAD)
    assert (limit.limit, limit.decreases) == (20, 1)
    limit.round_trip = 0.0  # a round trip has passed: the next overload of a request sent since is news
    again = await limit.acquire()
    limit.release(again, Outcome.OVERLOAD)
    assert (limit.limit, limit.decreases) == (1, 2)


async def test_a_reply_s_time_is_the_round_trip() -> None:
    limit = AdaptiveLimit(4)
    assert limit.round_trip == 0.0
    ticket = await limit.acquire()
    await asyncio.sleep(0.01)
    limit.release(ticket, Outcome.OK)
    assert limit.round_trip > 0


async def test_the_limit_never_falls_below_one() -> None:
    limit = AdaptiveLimit(4)
    for _ in range(10):
        ticket = await limit.acquire()
        limit.release(ticket, Outcome.OVERLOAD)
        assert limit.limit == 1
    assert limit.decreases == 10


async def test_it_recovers_one_step_per_window_of_replies_up_to_its_cap() -> None:
    limit = AdaptiveLimit(6)
    tickets = await fill(limit, 6)
    limit.release(tickets[0], Outcome.OVERLOAD)
    assert limit.limit == 3
    for ticket in tickets[1:]:  # replies to requests sent before the cut say nothing about the new limit
        limit.release(ticket, Outcome.OK)
    assert limit.limit == 3
    seen = []
    for _ in range(3 + 4 + 5 + 6 + 6):  # 3 replies at limit 3 -> 4, 4 at 4 -> 5, 5 at 5 -> 6 = cap; then no more
        ticket = await limit.acquire()
        limit.release(ticket, Outcome.OK)
        seen.append(limit.limit)
    assert seen[2] == 4 and seen[6] == 5 and seen[11] == 6 and max(seen) == 6 and limit.increases == 3


async def test_other_failures_move_nothing() -> None:
    limit = AdaptiveLimit(4)
    tickets = await fill(limit, 4)
    limit.release(tickets[0], Outcome.OVERLOAD)
    for ticket in tickets[1:]:
        limit.release(ticket, Outcome.OTHER)
    for _ in range(10):
        ticket = await limit.acquire()
        limit.release(ticket, Outcome.OTHER)  # a 500, a dropped connection, a body that is not a completion
    assert (limit.limit, limit.increases, limit.decreases) == (2, 0, 1)


async def test_waiters_are_served_first_come_first_served() -> None:
    limit = AdaptiveLimit(1)
    (first,) = await fill(limit, 1)
    order: list[int] = []

    async def wait(i: int) -> None:
        ticket = await limit.acquire()
        order.append(i)
        await settle()
        limit.release(ticket, Outcome.OK)

    waiting = [asyncio.ensure_future(wait(i)) for i in range(5)]
    await settle()
    limit.release(first, Outcome.OK)
    await asyncio.gather(*waiting)
    assert order == [0, 1, 2, 3, 4] and limit.in_flight == 0


async def test_a_cancelled_waiter_keeps_no_slot() -> None:
    limit = AdaptiveLimit(1)
    (first,) = await fill(limit, 1)
    queued = asyncio.ensure_future(limit.acquire())
    await settle()
    queued.cancel()
    await settle()
    limit.release(first, Outcome.OK)
    assert limit.in_flight == 0
    # Given a slot and cancelled before it ran: the slot goes to the next waiter, not lost.
    (first,) = await fill(limit, 1)
    given = asyncio.ensure_future(limit.acquire())
    after = asyncio.ensure_future(limit.acquire())
    await settle()
    limit.release(first, Outcome.OK)  # hands the slot to ``given``...
    given.cancel()  # ...which is cancelled before it resumes
    await settle()
    assert given.cancelled() and after.done() and limit.in_flight == 1


async def test_requests_in_flight_never_exceed_the_limit() -> None:
    """Many requests with random ends and outcomes: whenever no cut happened while a request waited, the requests
    in flight when it is let through are within the limit (a cut cannot recall requests already sent)."""
    rng = random.Random(7)
    limit = AdaptiveLimit(20)
    peak = 0

    async def request() -> None:
        nonlocal peak
        cuts = limit.decreases
        ticket = await limit.acquire()
        assert limit.in_flight <= limit.limit or limit.decreases > cuts
        assert 1 <= limit.limit <= limit.cap
        peak = max(peak, limit.in_flight)
        for _ in range(rng.randint(0, 6)):
            await asyncio.sleep(0)
        x = rng.random()
        limit.release(ticket, Outcome.OVERLOAD if x < 0.03 else Outcome.OTHER if x < 0.08 else Outcome.OK)

    await asyncio.gather(*(request() for _ in range(3000)))
    assert limit.in_flight == 0 and not limit._waiters
    assert peak <= 20 and limit.decreases > 0 and limit.increases > 0


def test_a_cap_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        AdaptiveLimit(0)


async def test_endpoint_limits_shows_each_endpoint_by_its_redacted_url() -> None:
    url = "http://127.0.0.1:9/v1?api_key=hunter2-secret-value"
    limit = endpoint_limit(url, 8)
    try:
        tickets = await fill(limit, 3)
        assert endpoint_limits()["http://127.0.0.1:9/v1"] == (8, 3)
        assert "hunter2" not in repr(endpoint_limits())
        limit.release(tickets[0], Outcome.OVERLOAD)
        assert endpoint_limits()["http://127.0.0.1:9/v1"] == (1, 2)
    finally:
        forget_endpoint(url, limit)
    assert "http://127.0.0.1:9/v1" not in endpoint_limits()


async def test_an_endpoint_that_refuses_its_first_requests_is_down_at_once() -> None:
    from voirdire.base.errors import EndpointDown
    from voirdire.models.limiter import FAIL_FAST_AFTER

    limit = AdaptiveLimit(FAIL_FAST_AFTER, "http://user:pw@127.0.0.1:9/v1?key=x")
    tickets = await fill(limit, FAIL_FAST_AFTER)
    waiters = [asyncio.ensure_future(limit.acquire()) for _ in range(FAIL_FAST_AFTER)]
    await settle()
    for ticket in tickets[:-1]:
        limit.release(ticket, Outcome.REFUSED, "ConnectError: [Errno 111] Connection refused")
    assert limit.down is None  # a refusal or two can be a server restarting
    await settle()
    assert all(w.done() for w in waiters[:-1])  # ... so the queue moves on meanwhile
    limit.release(tickets[-1], Outcome.REFUSED, "ConnectError: [Errno 111] Connection refused")
    assert limit.down is not None
    with pytest.raises(EndpointDown) as waited:  # the rest of the queue is told at once, not left to time out
        await waiters[-1]
    raised = []
    for _ in range(2):
        with pytest.raises(EndpointDown) as caught:
            await limit.acquire()
        raised.append(caught.value)
    # One exception each: an instance raised again and again would gather every raise's frames in its traceback.
    assert raised[0] is not raised[1]
    message = str(waited.value)
    assert "http://127.0.0.1:9/v1" in message and "Connection refused" in message and "first 3 requests" in message
    assert "pw" not in message and "key=x" not in message


async def test_one_answer_means_a_later_refusal_is_only_a_blip() -> None:
    from voirdire.models.limiter import FAIL_FAST_AFTER

    limit = AdaptiveLimit(8)
    limit.release(await limit.acquire(), Outcome.OK)
    for _ in range(FAIL_FAST_AFTER * 3):
        limit.release(await limit.acquire(), Outcome.REFUSED, "refused")
    assert limit.down is None and limit.in_flight == 0


async def test_a_waiter_cancelled_after_the_queue_dropped_it_leaves_quietly() -> None:
    limit = AdaptiveLimit(1)
    ticket = await limit.acquire()
    first, second = asyncio.ensure_future(limit.acquire()), asyncio.ensure_future(limit.acquire())
    await settle()
    first.cancel()  # its future is cancelled at once; the task has not run its handler yet
    limit.release(ticket, Outcome.OK)  # _wake meets the cancelled waiter, drops it and serves the next
    await settle()
    assert first.cancelled() and second.done() and limit.in_flight == 1 and not limit._waiters


async def test_an_endpoint_whose_first_requests_all_time_out_is_down() -> None:
    from voirdire.base.errors import EndpointDown
    from voirdire.models.limiter import FAIL_FAST_AFTER

    limit = AdaptiveLimit(FAIL_FAST_AFTER + 1, "http://127.0.0.1:9/v1")
    tickets = await fill(limit, FAIL_FAST_AFTER + 1)
    limit.release(tickets[0], Outcome.CANCELLED)  # a session's budget ended it: nothing was heard
    await limit.acquire()  # its slot taken again
    waiter = asyncio.ensure_future(limit.acquire())  # queued: every slot is taken
    await settle()
    assert not waiter.done()
    for ticket in tickets[1:-1]:
        limit.release(ticket, Outcome.TIMEOUT, "ReplyTimeout: no complete reply within 1 s (timeout)")
    assert limit.down is None and limit.decreases == 1  # a timeout in flight is an overload as before
    limit.release(tickets[-1], Outcome.TIMEOUT, "ReplyTimeout: no complete reply within 1 s (timeout)")
    assert limit.down is not None
    assert "sent nothing back to its first 3 requests" in limit.down and "(--timeout)" in limit.down
    with pytest.raises(EndpointDown, match=r"http://127\.0\.0\.1:9/v1"):  # the queue is told at once
        await waiter
    with pytest.raises(EndpointDown):
        await limit.acquire()


@pytest.mark.parametrize("heard", [Outcome.OVERLOAD, Outcome.OK, Outcome.OTHER])
async def test_anything_heard_from_an_endpoint_means_its_timeouts_never_make_it_down(heard: Outcome) -> None:
    # A rate limiter answering 429 is there: the requests queued behind its 429s, and their timeouts later, are
    # the run's to retry, never a reason to stop it.
    from voirdire.models.limiter import FAIL_FAST_AFTER

    limit = AdaptiveLimit(1)
    first = await limit.acquire()
    limit.release(first, heard)
    for _ in range(10 * FAIL_FAST_AFTER):
        ticket = await limit.acquire()
        limit.release(ticket, Outcome.TIMEOUT)
    assert limit.down is None
