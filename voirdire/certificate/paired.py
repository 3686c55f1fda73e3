"""Two runs over the same items, compared pair by pair.

McNemar's exact test (statsmodels) asks whether two runs' accept/reject verdicts differ more in one direction than
in the other: only the discordant items count (accepted by one run, rejected by the other), and under the null
hypothesis each is equally likely to go either way, a binomial with p = 1/2. The paired bootstrap resamples the
shared items once for both runs and recomputes a metric's difference, so the interval accounts for the runs
being measured on the same items.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from voirdire.certificate.intervals import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    BootstrapMethod,
    Interval,
    bootstrap_counts,
    bootstrap_items,
)

T = TypeVar("T")


class McNemar(BaseModel):
    n: int  # items where both runs gave a verdict
    only_a: int  # accepted by run A only
    only_b: int  # accepted by run B only
    p_value: float
    test: str = "McNemar exact (binomial on the discordant items)"

    def text(self, what: str = "accepts") -> str:
        return (
            f"McNemar exact: p {_p(self.p_value)} ({self.only_a} items only A {what}, {self.only_b} only B {what}, "
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


def paired_rate_difference(
    name: str,
    a: Sequence[Sequence[bool]],
    b: Sequence[Sequence[bool]],
    *,
    level: float = DEFAULT_LEVEL,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> Interval:
    """``paired_difference`` of a rate (the share of true observations): each item is one row of counts (A's
    trues, A's sessions, B's trues, B's sessions), and every resample is summed at once (``bootstrap_counts``).
    The interval is the one ``paired_difference(..., mean)`` gives for the same resamples."""
    if len(a) != len(b):
        raise ValueError(f"length mismatch: {len(a)} vs {len(b)} items")
    rows = [(sum(xa), len(xa), sum(yb), len(yb)) for xa, yb in zip(a, b, strict=True)]
    return bootstrap_counts(name, rows, _rate_difference, level=level, seed=seed, resamples=resamples)


def _rate_difference(summed: Any) -> Any:
    """A's rate minus B's, of summed rows (A's trues, A's sessions, B's trues, B's sessions)."""
    return summed[..., 0] / summed[..., 1] - summed[..., 2] / summed[..., 3]


class PairedRuns(BaseModel):
    """Two runs over the same items: McNemar on accept/reject, paired bootstrap intervals on the difference of
    the accept rate and, where both know the gold label, of the agreement with gold."""

    a: str
    b: str
    shared: int  # items both runs judged (accept/reject)
    dropped: list[str]  # one line per reason an item does not count (only in one run, tied repeats)
    mcnemar: McNemar | None
    accept_rate: Interval  # A − B
    gold_items: int
    gold_agreement: Interval | None  # A − B, over the shared items with gold in both
    gold_mcnemar: McNemar | None  # on right/wrong against gold
    level: float

    def text(self) -> str:
        lines = [f"paired comparison, A = {self.a}, B = {self.b}: {self.shared} shared items"]
        lines += [f"  not counted: {why}" for why in self.dropped]
        if self.mcnemar is not None:
            lines.append(f"  accept/reject: {self.mcnemar.text()}")
        lines.append(f"  accept rate A − B: {self.accept_rate.text(percent=True)}")
        if self.gold_agreement is not None:
            difference = self.gold_agreement.text(percent=True)
            lines.append(f"  agreement with gold A − B ({self.gold_items} items): {difference}")
            if self.gold_mcnemar is not None:
                lines.append(f"  right/wrong against gold: {self.gold_mcnemar.text('gets right')}")
            lines.append(f"  {self.verdict()}")
        return "\n".join(lines)

    def verdict(self) -> str:
        """Which run agrees with gold more, and how sure that is."""
        d = self.gold_agreement
        level = f"{100 * self.level:g}%"
        if d is None or d.low is None or d.high is None:
            return "which run is better: undecided (no interval of the difference)"
        if d.low > 0 or d.high < 0:
            better, worse = ("A", "B") if d.low > 0 else ("B", "A")
            why = f"{level} interval of the difference excludes 0"
            return f"run {better} agrees with gold more than run {worse} ({why})"
        return f"neither run is better at {level} (the interval of the difference includes 0)"


def paired_runs(
    a: Mapping[str, Sequence[tuple[bool, bool | None]]],
    b: Mapping[str, Sequence[tuple[bool, bool | None]]],
    *,
    names: tuple[str, str] = ("A", "B"),
    level: float = DEFAULT_LEVEL,
    seed: int = DEFAULT_SEED,
) -> PairedRuns:
    """Runs A and B compared on their shared items; each maps item id → its sessions' (accepted, gold accepted
    or None). An item examined several times counts once in McNemar's test, by its majority verdict (an item
    whose repeats tie is not counted there), and with all its sessions in the bootstrap, which resamples items."""
    shared = [i for i in a if i in b and a[i] and b[i]]
    dropped = []
    for name, own, other in ((names[0], a, b), (names[1], b, a)):
        only = sum(1 for i in own if own[i] and not other.get(i))
        if only:
            dropped.append(f"{only} item{'s' if only != 1 else ''} judged only in {name}")
    majority = [(_majority([x for x, _ in a[i]]), _majority([y for y, _ in b[i]])) for i in shared]
    decided = [(x, y) for x, y in majority if x is not None and y is not None]
    if len(decided) < len(majority):
        dropped.append(f"{len(majority) - len(decided)} items whose repeats tie, left out of McNemar's test")
    mc = mcnemar_exact([x for x, _ in decided], [y for _, y in decided]) if decided else None  # type: ignore[misc]
    accept = paired_rate_difference(
        "accept rate A − B", [[x for x, _ in a[i]] for i in shared], [[y for y, _ in b[i]] for i in shared],
        level=level, seed=seed,
    )  # fmt: skip
    with_gold = [i for i in shared if all(g is not None for _, g in (*a[i], *b[i]))]
    gold = gold_mc = None
    if with_gold:
        right_a = [[x == g for x, g in a[i]] for i in with_gold]
        right_b = [[y == g for y, g in b[i]] for i in with_gold]
        gold = paired_rate_difference("agreement with gold A − B", right_a, right_b, level=level, seed=seed)
        pairs = [(_majority(ra), _majority(rb)) for ra, rb in zip(right_a, right_b, strict=True)]
        pairs = [(x, y) for x, y in pairs if x is not None and y is not None]
        gold_mc = mcnemar_exact([x for x, _ in pairs], [y for _, y in pairs]) if pairs else None  # type: ignore[misc]
    return PairedRuns(
        a=names[0], b=names[1], shared=len(shared), dropped=dropped, mcnemar=mc, accept_rate=accept,
        gold_items=len(with_gold), gold_agreement=gold, gold_mcnemar=gold_mc, level=level,
    )  # fmt: skip


def _majority(xs: Sequence[bool]) -> bool | None:
    yes = sum(xs)
    return None if 2 * yes == len(xs) else 2 * yes > len(xs)
