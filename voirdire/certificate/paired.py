"""Two runs over the same items, compared pair by pair.

McNemar's exact test (statsmodels) asks whether two runs' accept/reject verdicts differ more in one direction than
in the other: only the discordant items count (accepted by one run, rejected by the other), and under the null
hypothesis each is equally likely to go either way, a binomial with p = 1/2. The paired bootstrap resamples the
shared items once for both runs and recomputes a metric's difference, so the interval accounts for the runs
being measured on the same items.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from pydantic import BaseModel

from voirdire.certificate.intervals import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    BootstrapMethod,
    Interval,
    bootstrap_items,
)

T = TypeVar("T")


class McNemar(BaseModel):
    n: int  # items where both runs gave a verdict
    only_a: int  # accepted by run A only
    only_b: int  # accepted by run B only
    p_value: float
    test: str = "McNemar exact (binomial on the discordant items)"

    def text(self) -> str:
        return (
            f"McNemar exact: p {_p(self.p_value)} ({self.only_a} items accepted only by A, {self.only_b} only by B, "
            f"of {self.n})"
        )


def _p(p: float) -> str:
    return "< 0.001" if p < 0.001 else f"= {p:.3f}"


def mcnemar_exact(a: Sequence[bool], b: Sequence[bool]) -> McNemar:
    """McNemar's exact test on two runs' accept (True) / reject (False) verdicts over the same items, in order."""
    from statsmodels.stats.contingency_tables import mcnemar

    if len(a) != len(b):
        raise ValueError(f"length mismatch: {len(a)} vs {len(b)}")
    both = sum(x and y for x, y in zip(a, b, strict=True))
    only_a = sum(x and not y for x, y in zip(a, b, strict=True))
    only_b = sum(y and not x for x, y in zip(a, b, strict=True))
    neither = len(a) - both - only_a - only_b
    # No discordant item: nothing to test, the runs agree throughout (p = 1).
    p = 1.0 if only_a + only_b == 0 else float(mcnemar([[both, only_a], [only_b, neither]], exact=True).pvalue)
    return McNemar(n=len(a), only_a=only_a, only_b=only_b, p_value=min(p, 1.0))


def paired_difference(
    name: str,
    a: Sequence[Sequence[T]],
    b: Sequence[Sequence[T]],
    metric: Callable[[list[T]], float],
    *,
    level: float = DEFAULT_LEVEL,
    method: BootstrapMethod = "BCa",
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> Interval:
    """A paired bootstrap interval of ``metric(A) - metric(B)``; ``a[i]`` and ``b[i]`` are the observations of
    the same item i in the two runs (its sessions there)."""
    if len(a) != len(b):
        raise ValueError(f"length mismatch: {len(a)} vs {len(b)} items")
    groups = [[(x, 0) for x in xa] + [(y, 1) for y in yb] for xa, yb in zip(a, b, strict=True)]

    def difference(obs: list[tuple[T, int]]) -> float:
        return metric([x for x, side in obs if side == 0]) - metric([y for y, side in obs if side == 1])

    return bootstrap_items(name, groups, difference, level=level, method=method, seed=seed, resamples=resamples)
