"""A run's cost budget (``--max-cost USD``): what its model calls have been billed so far, priced as the report
prices them, and whether the next session may start.

The run stops, resumably, once the billed cost and the estimate of what the sessions in flight will still cost reach
the budget: no further session starts; those in flight finish, so the transcript holds whole sessions and a re-run
resumes from them. A session in flight is estimated at the mean cost of the sessions this run finished, or before
the first one ends at ``per_session`` (``--estimate``'s expected cost of a session, from an earlier transcript of the
same protocol and models; else 0, so the first ``--concurrency`` sessions start whatever the budget). The cost
counted is this run's: a resumed run starts from nothing, its budget its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from voirdire.transcript import ModelCall

if TYPE_CHECKING:
    from voirdire.reports import Prices


class CostBudget:
    """The billed cost of a run's model calls as their records are written (``observe``), against ``limit``."""

    def __init__(self, limit: float, prices: Prices, *, per_session: float | None = None) -> None:
        self.limit = limit
        self.prices = prices
        self.per_session = per_session
        self.spent = 0.0
        self.ended = 0
        self.unpriced: set[str] = set()

    def observe(self, record: Any) -> None:
        """A record written to the transcript: a billed model call adds its cost (replies from the response cache
        and coalesced calls bill nothing)."""
        if not isinstance(record, ModelCall) or record.cached or record.coalesced:
            return
        pricing = self.prices.pricing(record.model)
        if pricing.free is not None:
            return
        if pricing.price is None:
            self.unpriced.add(record.model)
            return
        u = record.usage
        self.spent += pricing.price.cost(
            u.prompt_tokens, u.completion_tokens, u.cache_read_tokens, u.cache_write_tokens
        )

    def session_ended(self) -> None:
        self.ended += 1

    def in_flight(self, sessions: int) -> float:
        """What ``sessions`` in flight are expected to cost: the mean of the finished ones (their calls included
        those of the sessions still running, so it errs high), else the estimate given."""
        each = self.spent / self.ended if self.ended else (self.per_session or 0.0)
        return each * sessions

    def exhausted(self, in_flight: int) -> bool:
        """Whether another session must not start: the billed cost and the sessions in flight reach the limit."""
        return self.spent + self.in_flight(in_flight) >= self.limit

    def reason(self, in_flight: int, left: int) -> str:
        """Why the run stopped, as ``voirdire: run stopped: ...`` prints it."""
        from voirdire.reports import usd

        flying = (
            f" and {usd(self.in_flight(in_flight))} expected of {in_flight} sessions in flight" if in_flight else ""
        )
        return (
            f"--max-cost {usd(self.limit)} reached: {usd(self.spent)} billed{flying}; {left} sessions (items) left "
            "to run"
        )
