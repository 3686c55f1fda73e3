"""Empirical undetected-lie rate of the EV protocol against Lemma 1's ``(1/4)^r`` (§7.1, App. A.1-A.3).

Setup (Theorem 1's assumption: "the evaluator always lies on any x iff it incorrectly labels"): every
simulated evaluator claims the **wrong** label ``ỹ' = 1 - f(x)`` and tries to get it past the verifier with a
generation strategy. A lie is *undetected* when all ``r`` rounds pass. Liars know the verifier's rubric ``C``
(both players are given it, §6.1 — unlike Table 3, where the generator knows only the IP rubric) and the public
challenges (Remark 1):

* ``consistent``: backs its wrong label honestly, ``x'`` with ``f(x') = ỹ'`` (Lie 2 with the true σ);
* ``ch2-cheater``: A.3's cheat — ``C(x') = C(x)`` always, with ``C̄(x') ≠ C̄(x)`` where possible;
* ``lie-sigma``: Lie 1 as the paper words it (§8.1.1) — outputs ``C(x)`` but "does not necessarily know
  ``C̄(x)``" (``x'`` uniform over ``C(x') = C(x)``);
* ``lie-sigma-permutation``: Lie 1 as the authors' notebook built it (``C(x')`` a permutation of ``C(x)``);
* ``copycat``: ``x' = x`` (Lemma 2 assumes ``x ≠ x'``, nothing in §6.1 enforces it);
* ``lie-p``: Lie 3, the oracle w.p. 0.9 and a random string w.p. 0.1; ``random``: a pure guesser.

Neither challenge reads ``ỹ'``, so for every strategy but ``consistent`` (whose ``x'`` depends on the label) the
wrong label plays no part: "undetected" is just the generator's pass rate. And a strategy that reproduces
``C̄(x)`` is, for the verifier, an evaluator that knows ``f`` (App. A.1.2: "generating an answer to pass *both*
challenges is equivalent to knowing f"), outside what Lemma 3 bounds. ``knows_total`` splits the strategies:
``lie-p`` (the oracle 90% of the time) and ``copycat`` know or copy ``C̄(x)`` on every rubric, and so do
``ch2-cheater`` and ``lie-sigma`` on a rubric with ``C̄ = C`` (OOP), where reproducing ``C(x)`` *is*
reproducing ``C̄(x)``. Lemma 1 is judged on the other group only.

For each (strategy, rubric, r) the simulation reports the empirical rate with a 95% Wilson interval, the
exact rate ``E_x[q(x)^r]`` from the generator's distribution, ``(1/4)^r`` and the group.
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import BaseModel

from .challenges import RuleVerifier
from .evaluators import ComposedEvaluator, ScriptedLabeller
from .generators import (
    Generator,
    LieApproxGenerator,
    LieFGenerator,
    LieSigmaGenerator,
    Mixture,
    Proposal,
    RandomGenerator,
    _SpaceCache,
)
from .protocol import NoDataItem, NoDataProtocol, NoDataProtocolParams
from .rubric import Label, Rubric
from .theory import lemma1_undetected_probability, round_pass_probability

if TYPE_CHECKING:  # a type only: the registration (`voirdire --help`) does not import numpy
    import numpy as np


@dataclass
class Challenge2Cheater:
    """App. A.3: "the evaluator anticipates Challenge 2, and picks an x' such that C(x') = C(x)".

    With ``force_wrong_structure`` it also avoids ``C̄(x') = C̄(x)`` whenever the rubric allows (the strict
    cheat that can pass Challenge 2 only); without it, it samples uniformly from ``{x' : C(x') = C(x)}``.
    """

    rubric: Rubric
    force_wrong_structure: bool = True
    name: str = "ch2-cheater"
    _cache: _SpaceCache = field(init=False, repr=False, default_factory=_SpaceCache)
    _supports: dict[tuple[int, Hashable, Hashable], Sequence[str]] = field(init=False, repr=False, default_factory=dict)

    def _key(self, s: str) -> Hashable:
        return self.rubric.evaluate(s)

    def _support(self, x: str) -> Sequence[str]:
        key = (len(x), self._key(x), self.rubric.evaluate_total(x))
        support = self._supports.get(key)
        if support is None:
            same_c = self._cache.get(len(x)).members("C", self._key, key[1])
            wrong = [s for s in same_c if self.rubric.evaluate_total(s) != key[2]]
            support = self._supports[key] = wrong if (wrong and self.force_wrong_structure) else same_c
        return support

    async def propose(self, x: str, y_hat: Label, round: int, rng: np.random.Generator) -> Proposal:
        support = self._support(x)
        return Proposal(x_prime=support[int(rng.integers(len(support)))], y_tilde=y_hat, strategy=self.name)

    def distribution(self, x: str, y_hat: Label) -> Mixture:
        return [(1.0, self._support(x))]


@dataclass
class Copycat:
    """Returns ``x' = x``: passes both challenges whatever label it claims, since neither reads ``ỹ'``."""

    name: str = "copycat"

    async def propose(self, x: str, y_hat: Label, round: int, rng: np.random.Generator) -> Proposal:
        return Proposal(x_prime=x, y_tilde=y_hat, strategy=self.name)

    def distribution(self, x: str, y_hat: Label) -> Mixture:
        return [(1.0, [x])]


STRATEGIES: dict[str, Callable[[Rubric], Generator]] = {
    "consistent": lambda r: LieFGenerator(r, name="consistent"),
    "ch2-cheater": lambda r: Challenge2Cheater(r),
    "lie-sigma": lambda r: LieSigmaGenerator(r, "encoding"),
    "lie-sigma-permutation": lambda r: LieSigmaGenerator(r, "permutation", name="lie-sigma-permutation"),
    "copycat": lambda r: Copycat(),
    "lie-p": lambda r: LieApproxGenerator(r, 0.1),
    "random": lambda r: RandomGenerator(),
}

#: Strategies that know or copy ``C̄(x)`` whatever the rubric: Lie 3 is the oracle w.p. 1 - p, the copycat
#: returns x itself.
ALWAYS_KNOW_TOTAL = frozenset({"lie-p", "copycat"})
#: Strategies that reproduce ``C(x)`` exactly: on a rubric with ``C̄ = C`` (OOP) that is ``C̄(x)`` too.
REPRODUCE_ENCODING = frozenset({"ch2-cheater", "lie-sigma"})


def knows_total(strategy: str, rubric: Rubric) -> bool:
    """Whether ``strategy`` knows or copies ``C̄(x)`` under ``rubric`` — Lemma 3's "knows f" case, which passes
    w.p. 1 and which Lemma 1's ``(1/4)^r`` does not bound."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; expected one of {', '.join(STRATEGIES)}")
    return strategy in ALWAYS_KNOW_TOTAL or (rubric.is_total and strategy in REPRODUCE_ENCODING)


class UndetectedRate(BaseModel):
    strategy: str
    rubric: str
    rounds: int
    trials: int
    undetected: float
    ci_low: float
    ci_high: float
    exact: float
    per_round_exact: float
    lemma1: float
    knows_total: bool = False


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval for a binomial proportion (sound near 0, where these rates live)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


async def undetected_rate(
    strategy: str,
    rubric: Rubric,
    xs: Sequence[str],
    rounds: int,
    trials: int,
    seed: int = 0,
) -> UndetectedRate:
    """Run ``trials`` sessions of ``NoDataProtocol`` (datapoints cycled from ``xs``) with a liar claiming
    ``1 - f(x)``; a lie is undetected when the EV protocol succeeds."""
    generator = STRATEGIES[strategy](rubric)
    evaluator = ComposedEvaluator(ScriptedLabeller(lambda x: 1 - rubric.label(x)), generator)
    verifier = RuleVerifier(rubric)
    protocol = NoDataProtocol(NoDataProtocolParams(rounds=rounds), evaluator=evaluator, verifier=verifier)
    run_id = list(STRATEGIES).index(strategy) * 1000 + rounds
    items = [NoDataItem(index=t, x=xs[t % len(xs)], seed=seed, run=run_id) for t in range(trials)]
    from voirdire.kit.runs import run_in_memory  # the runner: imported by a simulation, not by the registration

    verdicts, _ = await run_in_memory(protocol, items, keep=False)
    passed = sum(bool(v.accepted) for v in verdicts)
    # Exact rate: every generator here samples from a finite mixture, so q(x) is computable (theory.py).
    counts = Counter(xs[t % len(xs)] for t in range(trials))
    q = {
        x: round_pass_probability(x, generator.distribution(x, 1 - rubric.label(x)), verifier)  # type: ignore[attr-defined]
        for x in counts
    }
    exact = sum(n * q[x] ** rounds for x, n in counts.items()) / trials
    per_round = sum(n * q[x] for x, n in counts.items()) / trials
    low, high = wilson_interval(passed, trials)
    return UndetectedRate(
        strategy=strategy,
        rubric=rubric.name,
        rounds=rounds,
        trials=trials,
        undetected=passed / trials,
        ci_low=low,
        ci_high=high,
        exact=exact,
        per_round_exact=per_round,
        lemma1=lemma1_undetected_probability(rounds),
        knows_total=knows_total(strategy, rubric),
    )


def simulate(
    rubrics: Sequence[tuple[Rubric, Sequence[str]]],
    strategies: Sequence[str] = tuple(STRATEGIES),
    rounds: Sequence[int] = (1, 2, 3, 4, 5),
    trials: int = 2000,
    seed: int = 0,
) -> list[UndetectedRate]:
    """The full grid, synchronously (used by ``bench/no_data_lie_simulation.py``)."""

    async def grid() -> list[UndetectedRate]:
        return [
            await undetected_rate(s, rubric, xs, r, trials, seed)
            for rubric, xs in rubrics
            for s in strategies
            for r in rounds
        ]

    return asyncio.run(grid())
