"""Generators: how the evaluator produces a similar ``x'`` and partial label ``ỹ'`` each round (§6.1.1, §8).

The evaluator only knows *its own* rubric (the IP rubric in §8: "During OOP, the LLM was given the rubric for
IP"); the verifier checks against the rubric of the phenomenon under test. So every generator here takes the
``known`` rubric, and on OOP data it keeps generating with the IP rubric — which is why OOP success is low.

* ``OracleGenerator``: the base generator of Table 2 ("the generator acts as an oracle"): it picks an ``x'``
  whose total evaluation under the known rubric matches ``x`` — the "picking a matching datapoint" strategy
  of §8.0.2/§8.1.2, from a candidate pool or from all n-bit strings.
* ``LieSigmaGenerator``, ``LieFGenerator``, ``LieApproxGenerator``: the three lies of §8.1.1 / Table 3.

Every generator passes the evaluator's current label ``ŷ`` on as ``ỹ'`` (the notebook's choice; §6.1.1 calls
``ỹ'`` the evaluator's "guess ... based on the encoding C(x')" — see docs/no_data.md, *Readings*).
* ``RandomGenerator``: a pure guesser, for the undetected-lie simulation.

All randomness comes from the ``numpy.random.Generator`` passed in, so runs are reproducible from a seed.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from pydantic import BaseModel

from .rubric import Label, MajorityVote, Rubric, SubsetMode, relevant_subsets

if TYPE_CHECKING:  # a type only: the registration (`voirdire --help`) does not import numpy
    import numpy as np

#: A mixture of uniform distributions over string sets: ``[(weight, strings), ...]`` (weights sum to 1).
Mixture = list[tuple[float, Sequence[str]]]

_MAX_ENUMERATED_BITS = 16  # 2^16 strings is still cheap to enumerate and group once


def uniform_bits(n: int, rng: np.random.Generator) -> str:
    """A uniformly random n-bit string."""
    return "".join("1" if b else "0" for b in rng.integers(0, 2, size=n))


@lru_cache(maxsize=8)
def _all_strings(n: int) -> tuple[str, ...]:
    if n > _MAX_ENUMERATED_BITS:
        raise ValueError(f"cannot enumerate {n}-bit strings")
    return tuple(format(i, f"0{n}b") for i in range(2**n))


def _uniform_over_all(n: int) -> Mixture:
    return [(1.0, _all_strings(n))]


class Proposal(BaseModel):
    """One round's commitment ``<x', ỹ'>`` (§6.1.1: "the evaluator may not change them in this round")."""

    x_prime: str
    y_tilde: Label
    strategy: str = ""
    rationale: str = ""


@runtime_checkable
class Generator(Protocol):
    """Produces ``<x', ỹ'>`` from ``x`` and the evaluator's label ``ŷ`` for this round."""

    name: str

    async def propose(self, x: str, y_hat: Label, round: int, rng: np.random.Generator) -> Proposal: ...


class StringSpace:
    """Uniform sampling of ``x'`` from a candidate set (a pool, or all n-bit strings) subject to a key match.

    Candidates are grouped by key once and cached, so rejection sampling (the notebook's approach, with the
    same distribution: uniform over the matching set) is replaced by a single ``rng.choice``.
    """

    def __init__(self, n: int, pool: Sequence[str] | None = None, max_tries: int = 200_000) -> None:
        self.n = n
        self.max_tries = max_tries
        self.pool: tuple[str, ...] | None = None
        if pool is not None:
            self.pool = tuple(dict.fromkeys(s for s in pool if len(s) == n))
        elif n <= _MAX_ENUMERATED_BITS:
            self.pool = _all_strings(n)
        self._groups: dict[str, dict[Hashable, list[str]]] = {}

    def uniform(self, rng: np.random.Generator) -> str:
        return uniform_bits(self.n, rng)

    def members(self, key_name: str, key: Callable[[str], Hashable], target: Hashable) -> list[str]:
        if self.pool is None:
            raise ValueError(f"cannot enumerate {self.n}-bit strings; give a candidate pool")
        groups = self._groups.get(key_name)
        if groups is None:
            groups = {}
            for s in self.pool:
                groups.setdefault(key(s), []).append(s)
            self._groups[key_name] = groups
        return groups.get(target, [])

    def sample(
        self, rng: np.random.Generator, key_name: str, key: Callable[[str], Hashable], target: Hashable
    ) -> str | None:
        """A uniformly random candidate with ``key(candidate) == target``, or None if there is none."""
        if self.pool is not None:
            matches = self.members(key_name, key, target)
            return matches[int(rng.integers(len(matches)))] if matches else None
        for _ in range(self.max_tries):
            s = self.uniform(rng)
            if key(s) == target:
                return s
        return None


@dataclass
class _SpaceCache:
    pool: Sequence[str] | None = None
    spaces: dict[int, StringSpace] = field(default_factory=dict)

    def get(self, n: int) -> StringSpace:
        space = self.spaces.get(n)
        if space is None:
            space = self.spaces[n] = StringSpace(n, self.pool)
        return space


def total_key(rubric: Rubric, subsets: SubsetMode = "whole") -> Callable[[str], Hashable]:
    """What an evaluator that knows the total evaluation matches ``x'`` on, for the verifier's ``S_x`` reading.

    * ``"whole"`` (``S_x = {x}``): ``C̄(x)``. Equal keys pass Challenge 1 (eq. 2 reduces to ``C̄(x') = C̄(x)``)
      and Challenge 2 (``C`` is part of ``C̄``).
    * ``"substrings"``: ``(C̄(x), {C̄(t) : t ∈ S_x})``. Equal sets give eq. (2) (every ``s ∈ S_x`` has a ``t ∈
      S_x'`` with the same total evaluation) and the equal whole-string ``C̄`` gives Challenge 2 — matching the
      set alone would not, since ``x'`` may reach ``C̄(x)`` only on a proper substring.

    Either way ``x`` matches itself, so a match always exists among all n-bit strings (App. A.1.2: "Knowing f
    implies ... it will pass the checks from the verifier w.p.1").
    """
    if subsets == "whole":
        return rubric.evaluate_total
    if subsets == "substrings":

        def key(s: str) -> Hashable:
            return rubric.evaluate_total(s), frozenset(rubric.evaluate_total(t) for t in relevant_subsets(s, subsets))

        return key
    raise ValueError(f"unknown S_x mode {subsets!r}; expected 'whole' or 'substrings'")


@dataclass
class OracleGenerator:
    """§8 base generator: pick ``x'`` with the same total evaluation as ``x`` under the rubric it knows.

    "Same total evaluation" follows the verifier's ``S_x`` reading, which is public (Remark 1): ``C̄(x') =
    C̄(x)`` for ``subsets="whole"``, and the same ``C̄`` of the whole string *and* the same set ``{C̄(t) : t ∈
    S_x}`` for ``subsets="substrings"`` (``total_key``). Either way it passes both challenges w.p. 1 when the
    verifier checks the rubric it knows (App. A.1.2), so the No-Data Algorithm "reduces to simple evaluation"
    (Table 2 caption).

    With ``pool`` it picks from those datapoints (the LLM's "pick the datapoint that matches the criteria"
    of App. D Prompt 2); a pool without a match falls back to all n-bit strings, since App. D.2 made sure the
    candidates contained a match. Among all n-bit strings ``x`` itself always matches; under ``"substrings"``
    it is the only match for 5 of the 498 IP test points, and the oracle then returns ``x' = x``.
    """

    known: Rubric
    pool: Sequence[str] | None = None
    subsets: SubsetMode = "whole"
    name: str = "oracle"
    _cache: _SpaceCache = field(init=False, repr=False)
    _fallback: _SpaceCache = field(init=False, repr=False)
    _key: Callable[[str], Hashable] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._cache = _SpaceCache(self.pool)
        self._fallback = _SpaceCache(None)
        self._key = total_key(self.known, self.subsets)

    @property
    def _key_name(self) -> str:
        return f"total:{self.subsets}"

    def key(self, s: str) -> Hashable:
        """The total evaluation the oracle matches on (``total_key``)."""
        return self._key(s)

    def pick(self, x: str, rng: np.random.Generator) -> str:
        target = self._key(x)
        x_prime = self._cache.get(len(x)).sample(rng, self._key_name, self._key, target)
        if x_prime is None and self.pool is not None:
            x_prime = self._fallback.get(len(x)).sample(rng, self._key_name, self._key, target)
        # x always matches itself; only reachable for huge n where rejection sampling gave up.
        return x if x_prime is None else x_prime

    async def propose(self, x: str, y_hat: Label, round: int, rng: np.random.Generator) -> Proposal:
        return Proposal(x_prime=self.pick(x, rng), y_tilde=y_hat, strategy=self.name)

    def matches(self, x: str) -> list[str]:
        """Every ``x'`` the oracle may pick for ``x``, in pool (or lexicographic) order."""
        target = self._key(x)
        members = self._cache.get(len(x)).members(self._key_name, self._key, target)
        if not members and self.pool is not None:
            members = self._fallback.get(len(x)).members(self._key_name, self._key, target)
        return members or [x]

    def distribution(self, x: str, y_hat: Label) -> Mixture:
        return [(1.0, self.matches(x))]


LieSigmaMode = Literal["encoding", "permutation"]
LieFTarget = Literal["f", "bit-majority"]
LIE_SIGMA_MODES: tuple[str, ...] = ("encoding", "permutation")


@dataclass
class LieSigmaGenerator:
    """Lie 1 of §8.1.1 ("σ unknown"): "it can output an encoding C(x), but does not necessarily know C̄(x)".

    * ``mode="encoding"`` (default, the paper's wording): ``x'`` is uniform over ``{x' : C_known(x') =
      C_known(x)}`` — the right encoding, with whatever total evaluation it happens to have. It always passes
      Challenge 2 (on the rubric it knows) and passes Challenge 1 only when ``C̄`` matches by luck.
    * ``mode="permutation"`` (the authors' notebook): ``x'`` whose ``C_known(x')`` is a *permutation* of
      ``C_known(x)`` — only the count of satisfied criteria, all a majority-vote σ looks at, is right. It passes
      Challenge 2 only when the permutation is the identity. This is what reproduces Table 3's published Lie 1.
    """

    known: Rubric
    mode: LieSigmaMode = "encoding"
    name: str = "lie-sigma"
    _cache: _SpaceCache = field(init=False, repr=False, default_factory=_SpaceCache)

    def __post_init__(self) -> None:
        if self.mode not in LIE_SIGMA_MODES:
            raise ValueError(f"unknown Lie 1 mode {self.mode!r}; expected one of {', '.join(LIE_SIGMA_MODES)}")

    def _key(self, s: str) -> Hashable:
        encoding = self.known.evaluate(s)
        return encoding if self.mode == "encoding" else tuple(sorted(encoding))

    async def propose(self, x: str, y_hat: Label, round: int, rng: np.random.Generator) -> Proposal:
        x_prime = self._cache.get(len(x)).sample(rng, self.mode, self._key, self._key(x))
        return Proposal(x_prime=x_prime or x, y_tilde=y_hat, strategy=self.name)

    def distribution(self, x: str, y_hat: Label) -> Mixture:
        return [(1.0, self._cache.get(len(x)).members(self.mode, self._key, self._key(x)) or [x])]


def bit_majority(s: str) -> Label:
    """Majority vote over the *bits* of ``s``; what the authors' notebook applied for Lie 2 (see docs)."""
    return MajorityVote()(tuple(int(ch) for ch in s))


@dataclass
class LieFGenerator:
    """Lie 2 of §8.1.1 ("f unknown"): it retrieves an ``x'`` with ``y' = y`` "but nothing else".

    By default ``y'`` is ``f_known(x') = σ C_known(x')`` as the paper states. The authors' notebook
    instead compared ``ŷ`` with a majority vote over the raw bits of ``x'``; pass ``label_of=bit_majority``
    to reproduce that variant. Either way ``x'`` carries no information about ``C(x)``.
    """

    known: Rubric
    label_of: Callable[[str], Label] | None = None
    name: str = "lie-f"
    _cache: _SpaceCache = field(init=False, repr=False, default_factory=_SpaceCache)

    def _key(self, s: str) -> Hashable:
        return self.label_of(s) if self.label_of is not None else self.known.label(s)

    def _key_name(self) -> str:
        return "label" if self.label_of is None else f"label:{id(self.label_of)}"

    async def propose(self, x: str, y_hat: Label, round: int, rng: np.random.Generator) -> Proposal:
        space = self._cache.get(len(x))
        x_prime = space.sample(rng, self._key_name(), self._key, y_hat)
        # No string carries label ŷ under the liar's view (possible for a degenerate σ): it guesses.
        return Proposal(x_prime=x_prime or space.uniform(rng), y_tilde=y_hat, strategy=self.name)

    def distribution(self, x: str, y_hat: Label) -> Mixture:
        members = self._cache.get(len(x)).members(self._key_name(), self._key, y_hat)
        return [(1.0, members)] if members else _uniform_over_all(len(x))


@dataclass
class LieApproxGenerator:
    """Lie 3 of §8.1.1: it "approximately know[s] f up to a probability p": w.p. ``1 - p`` it acts as the
    oracle, w.p. ``p`` it returns a uniformly random string. The paper states ``p = 1/10``; the authors'
    notebook called this generator without ``p`` and so used its default 0.25 (see docs/no_data.md).
    """

    known: Rubric
    p: float = 0.1
    pool: Sequence[str] | None = None
    subsets: SubsetMode = "whole"
    name: str = "lie-p"
    _oracle: OracleGenerator = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not 0.0 <= self.p <= 1.0:
            raise ValueError(f"p must be a probability, got {self.p}")
        self._oracle = OracleGenerator(self.known, self.pool, self.subsets)

    async def propose(self, x: str, y_hat: Label, round: int, rng: np.random.Generator) -> Proposal:
        if rng.random() < self.p:
            x_prime = uniform_bits(len(x), rng)
            return Proposal(x_prime=x_prime, y_tilde=y_hat, strategy=self.name, rationale="random string")
        return Proposal(x_prime=self._oracle.pick(x, rng), y_tilde=y_hat, strategy=self.name)

    def distribution(self, x: str, y_hat: Label) -> Mixture:
        oracle = self._oracle.distribution(x, y_hat)
        return [(1.0 - self.p, oracle[0][1]), *((self.p * w, s) for w, s in _uniform_over_all(len(x)))]


@dataclass
class RandomGenerator:
    """Returns a uniformly random n-bit ``x'``: a liar that does not even try (simulation baseline)."""

    name: str = "random"

    async def propose(self, x: str, y_hat: Label, round: int, rng: np.random.Generator) -> Proposal:
        return Proposal(x_prime=uniform_bits(len(x), rng), y_tilde=y_hat, strategy=self.name)

    def distribution(self, x: str, y_hat: Label) -> Mixture:
        return _uniform_over_all(len(x))


GeneratorName = Literal["oracle", "lie-sigma", "lie-f", "lie-p", "random"]
#: The CLI's ``--generator`` choices (``random`` is a simulation baseline, not a §8 strategy).
GENERATOR_NAMES = ("oracle", "lie-sigma", "lie-f", "lie-p")


@lru_cache(maxsize=64)
def rule_generator(
    name: str,
    known: Rubric,
    *,
    p: float = 0.1,
    subsets: SubsetMode = "whole",
    lie_sigma_mode: LieSigmaMode = "encoding",
    lie_f_target: LieFTarget = "f",
) -> Generator:
    """``make_generator`` without a pool, built once per process for each setting: generators hold no state but
    their lookup tables (every draw comes from the stream passed in), so runs share them."""
    return make_generator(name, known, p=p, subsets=subsets, lie_sigma_mode=lie_sigma_mode, lie_f_target=lie_f_target)


def make_generator(
    name: str,
    known: Rubric,
    *,
    p: float = 0.1,
    pool: Sequence[str] | None = None,
    subsets: SubsetMode = "whole",
    lie_sigma_mode: LieSigmaMode = "encoding",
    lie_f_target: LieFTarget = "f",
) -> Generator:
    """Build a generator by its CLI name (``--generator oracle|lie-sigma|lie-f|lie-p``).

    ``subsets`` is the verifier's ``S_x`` reading (public, Remark 1), which the oracle (and Lie 3's oracle part)
    matches; ``lie_sigma_mode`` picks Lie 1's construction (the paper's ``encoding`` or the notebook's
    ``permutation``) and ``lie_f_target`` Lie 2's (``f(x')``, the paper's, or the notebook's ``bit-majority``).
    """
    if name == "oracle":
        return OracleGenerator(known, pool, subsets)
    if name == "lie-sigma":
        return LieSigmaGenerator(known, lie_sigma_mode)
    if name == "lie-f":
        return LieFGenerator(known, label_of=bit_majority if lie_f_target == "bit-majority" else None)
    if name == "lie-p":
        return LieApproxGenerator(known, p, pool, subsets)
    if name == "random":
        return RandomGenerator()
    raise ValueError(f"unknown generator {name!r}; expected one of {', '.join(GENERATOR_NAMES)} or 'random'")
