"""The one rule by which model calls are counted: a report's usage per role and model, the viewer's per-attempt
counts per model and what a run is billed for all add ``model_call`` records to a ``CallTally``.

A call answered from the response cache (``cached``) took no request and is not billed: its tokens are counted
apart. A coalesced call was answered by an identical request of the same session: no request, no tokens. Every
other call's tokens were billed, and its ``requests`` (retries, generations) were sent.
"""

from __future__ import annotations

from dataclasses import astuple, dataclass, fields

from voirdire.transcript.schema import ModelCall


@dataclass
class CallTally:
    """Model calls of one model (of one role, of one session attempt: whatever the reader groups by)."""

    calls: int = 0
    requests: int = 0  # requests (or generations) sent; 0 for cached and coalesced calls
    prompt_tokens: int = 0  # of the calls a model answered: billed
    completion_tokens: int = 0
    cached_calls: int = 0
    cached_prompt_tokens: int = 0  # what the cached replies once took: not billed again
    cached_completion_tokens: int = 0
    coalesced_calls: int = 0
    latency_s: float = 0.0  # model time
    # Of the billed prompt tokens, those the provider read from its prompt cache and wrote to it (their own rates).
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def count(
        self,
        prompt: int,
        completion: int,
        *,
        requests: int,
        cached: bool = False,
        coalesced: bool = False,
        latency_s: float = 0.0,
        cache_read: int = 0,
        cache_write: int = 0,
    ) -> None:
        """One call, from its record's fields (a reader that extracts them from the bytes feeds them here)."""
        self.calls += 1
        self.requests += requests
        self.latency_s += latency_s
        if cached:
            self.cached_calls += 1
            self.cached_prompt_tokens += prompt
            self.cached_completion_tokens += completion
        else:
            self.prompt_tokens += prompt
            self.completion_tokens += completion
            self.cache_read_tokens += cache_read
            self.cache_write_tokens += cache_write
        self.coalesced_calls += coalesced

    def count_call(self, call: ModelCall) -> None:
        self.count(
            call.usage.prompt_tokens,
            call.usage.completion_tokens,
            requests=call.requests,
            cached=call.cached,
            coalesced=call.coalesced,
            latency_s=call.latency_s,
            cache_read=call.usage.cache_read_tokens,
            cache_write=call.usage.cache_write_tokens,
        )

    @property
    def all_prompt_tokens(self) -> int:
        """Prompt tokens of every call, billed or cached."""
        return self.prompt_tokens + self.cached_prompt_tokens

    @property
    def all_completion_tokens(self) -> int:
        return self.completion_tokens + self.cached_completion_tokens

    @property
    def billed(self) -> tuple[int, ...]:
        """(billed prompt tokens, billed completion tokens, requests), and the provider's cache reads and writes
        after them where it cached, as ``voirdire.reports.run_cost`` prices."""
        if not (self.cache_read_tokens or self.cache_write_tokens):
            return self.prompt_tokens, self.completion_tokens, self.requests
        return (
            self.prompt_tokens, self.completion_tokens, self.requests, self.cache_read_tokens, self.cache_write_tokens
        )  # fmt: skip

    def add(self, other: CallTally) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def row(self) -> list[float]:
        """Its numbers in field order (how an index file stores it)."""
        return list(astuple(self))

    @classmethod
    def from_row(cls, row: list[float]) -> CallTally:
        names = [f.name for f in fields(cls)]
        if len(row) == len(names) - 2:  # an index written before the provider's cache was counted
            row = [*row, 0, 0]
        if len(row) != len(names):
            raise ValueError(f"a call tally has {len(names)} numbers, not {len(row)}")
        return cls(**{name: int(x) if name != "latency_s" else float(x) for name, x in zip(names, row, strict=True)})
