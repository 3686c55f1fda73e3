"""What a run's model calls used and cost: per role and in total (``Usage``), priced from the calls' tallies
(``priced``), and how a report prints it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pydantic import BaseModel, Field

from voirdire.reports.prices import Prices, model_name
from voirdire.transcript import CallTally


class Usage(BaseModel):
    """Model calls of one role (or of the whole transcript), their tokens and what they cost.

    Every model call the transcript records counts, including those of an attempt a resume later replaced: they
    were paid for. Replies from voirdire's response cache (``cached``) cost nothing; their tokens are counted
    apart. A coalesced call was answered by an identical request of the same session and carries no tokens."""

    models: list[str] = Field(default_factory=list, description="model labels as the transcript records them")
    calls: int = 0
    requests: int = Field(0, description="requests (or generations) sent; 0 for cached and coalesced calls")
    prompt_tokens: int = Field(0, description="prompt tokens of the calls a model answered (billed)")
    completion_tokens: int = Field(0, description="completion tokens of the calls a model answered (billed)")
    cached_calls: int = 0
    cached_prompt_tokens: int = Field(0, description="tokens the cached replies once took; not billed again")
    cached_completion_tokens: int = 0
    coalesced_calls: int = 0
    cache_read_tokens: int = Field(0, description="of the billed prompt tokens: read from the provider's prompt cache")
    cache_write_tokens: int = Field(0, description="of the billed prompt tokens: written to the provider's cache")
    cost_usd: float | None = Field(
        None, description="USD; None when unknown (a billed model without a price). For the total: the priced part"
    )
    uncached_cost_usd: float | None = Field(
        None,
        description="USD the same calls would have cost with no provider prompt cache (every prompt token at "
        "the input rate); None when unknown",
    )
    cost_partial: bool = Field(False, description="the total leaves out models without a price (see unpriced)")
    free: list[str] = Field(default_factory=list, description="models that run here and cost nothing")
    unpriced: list[str] = Field(default_factory=list, description="billed models the price table does not name")

    def add(self, other: Usage) -> None:
        for name in ("calls", "requests", "prompt_tokens", "completion_tokens", "cached_calls",
                     "cached_prompt_tokens", "cached_completion_tokens", "coalesced_calls", "cache_read_tokens",
                     "cache_write_tokens"):  # fmt: skip
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name in ("models", "free", "unpriced"):
            seen = getattr(self, name)
            seen.extend(m for m in getattr(other, name) if m not in seen)


def priced(tallies: Mapping[tuple[str, str], CallTally], prices: Prices) -> tuple[dict[str, Usage], Usage]:
    """The usage of each role (in the order of ``tallies``: each (role, model)'s calls) and in total, priced by
    ``prices``: a free model costs 0, a billed model with no price leaves the cost unknown, never 0."""
    roles: dict[str, Usage] = {}
    total = Usage()
    for (role, model), t in tallies.items():
        u = Usage(
            models=[model], calls=t.calls, requests=t.requests, prompt_tokens=t.prompt_tokens,
            completion_tokens=t.completion_tokens, cached_calls=t.cached_calls,
            cached_prompt_tokens=t.cached_prompt_tokens, cached_completion_tokens=t.cached_completion_tokens,
            coalesced_calls=t.coalesced_calls, cache_read_tokens=t.cache_read_tokens,
            cache_write_tokens=t.cache_write_tokens,
        )  # fmt: skip
        pricing = prices.pricing(model)
        if pricing.free is not None:
            u.cost_usd, u.uncached_cost_usd, u.free = 0.0, 0.0, [model]
        elif pricing.price is not None:
            u.cost_usd = pricing.price.cost(
                u.prompt_tokens, u.completion_tokens, u.cache_read_tokens, u.cache_write_tokens
            )
            u.uncached_cost_usd = pricing.price.uncached(u.prompt_tokens, u.completion_tokens)
        elif u.prompt_tokens or u.completion_tokens or u.requests:
            u.unpriced = [model]  # billed calls with no price: unknown, never 0
        else:
            u.cost_usd = u.uncached_cost_usd = 0.0  # only cached or coalesced calls: nothing was billed
        if role in roles:
            before = roles[role]
            cost = None if before.cost_usd is None or u.cost_usd is None else before.cost_usd + u.cost_usd
            whole = (
                None
                if before.uncached_cost_usd is None or u.uncached_cost_usd is None
                else before.uncached_cost_usd + u.uncached_cost_usd
            )
            before.add(u)
            before.cost_usd, before.uncached_cost_usd = cost, whole
        else:
            roles[role] = u.model_copy(deep=True)
        total.add(u)
        if u.cost_usd is not None:
            total.cost_usd = (total.cost_usd or 0.0) + u.cost_usd
        if u.uncached_cost_usd is not None:
            total.uncached_cost_usd = (total.uncached_cost_usd or 0.0) + u.uncached_cost_usd
    # The total of what is priced; None when nothing is, and marked partial when a billed model has no price.
    total.cost_partial = bool(total.unpriced) and total.cost_usd is not None
    return roles, total


def _usd(x: float) -> str:
    return f"${x:,.2f}" if x >= 10 else f"${x:.4f}"


def _names(labels: Iterable[str]) -> str:
    """Model names as a price file keys them (``gpt-4o-mini``, not ``openai:gpt-4o-mini@https://...``)."""
    return ", ".join(dict.fromkeys(model_name(label)[0] for label in labels))


def _kinds(labels: Iterable[str]) -> str:
    """What free models are: local, scripted, human."""
    return ", ".join(dict.fromkeys(model_name(label)[1] or label for label in labels))


def _cost_total(u: Usage) -> str:
    if u.free and u.free == u.models:
        return f"free ({_kinds(u.free)})"
    if u.cost_usd is None or (u.cost_partial and not u.cost_usd):  # "at least $0.0000" would say nothing
        return f"unknown (no price for {_names(u.unpriced)}; give one with --prices FILE)"
    if u.cost_partial:
        return f"at least {_usd(u.cost_usd)} (partial: no price for {_names(u.unpriced)}; give one with --prices FILE)"
    return _usd(u.cost_usd)


def _cost_of_role(u: Usage) -> str:
    if u.cost_usd is None:
        return f"unknown (no price for {_names(u.unpriced)})"
    if u.free and u.free == u.models:
        return f"free ({_kinds(u.free)})"
    return f"{_usd(u.cost_usd)} ({_names(u.models)})"


def usage_lines(usage: Mapping[str, Usage], total: Usage | None) -> list[str]:
    """A report's lines on tokens and requests, then on the cost in total and per role: none without a call."""
    t = total
    if t is None or not t.calls:
        return []
    calls = f"for {t.calls:,} model call{'s' if t.calls != 1 else ''}"  # a call drawing k samples may send k
    if t.cached_calls:
        tokens = f"{t.cached_prompt_tokens:,} + {t.cached_completion_tokens:,} tokens"
        calls += f": {t.cached_calls:,} cached ({tokens}, free)"
    if t.coalesced_calls:
        calls += f"{',' if t.cached_calls else ':'} {t.coalesced_calls:,} coalesced"
    roles = ", ".join(f"{role} {_cost_of_role(u)}" for role, u in usage.items())
    lines = [
        f"tokens: {t.prompt_tokens:,} prompt + {t.completion_tokens:,} completion in {t.requests:,} "
        f"request{'s' if t.requests != 1 else ''} {calls}",
        f"cost: {_cost_total(t)} · by role: {roles}",
    ]
    if t.cache_read_tokens or t.cache_write_tokens:
        uncached = t.prompt_tokens - t.cache_read_tokens - t.cache_write_tokens
        lines.insert(
            1,
            f"prompt cache: {t.cache_read_tokens:,} prompt tokens read from the provider's cache, "
            f"{t.cache_write_tokens:,} written to it, {uncached:,} uncached",
        )
        if t.cost_usd is not None and t.uncached_cost_usd is not None:
            lines.append(f"cost without the prompt cache: {_usd(t.uncached_cost_usd)} (billed {_usd(t.cost_usd)})")
    return lines
