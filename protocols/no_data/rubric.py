"""Rubric model of the No-Data Algorithm (de Wynter 2025, "Labelling Data with Unknown References", §4-§5).

The paper assumes the true labelling is a composition ``f = σ C`` (Assumption 1, eq. 1):

* a **criterion** ``c: X -> {0, 1}`` (§5);
* the **rubric** ``C = c_1 | ... | c_n`` that concatenates the criteria outputs (§5);
* the **total rubric** ``C̄`` that explicitly decomposes non-linear criteria of arity > 1, e.g. the xor
  ``c_1 = c_{1,a} ⊕ c_{1,b}`` of Table 1, so ``|C̄| = 5`` for the in-phenomenon (IP) rubric (§5, Table 1);
* the **aggregator** ``σ: {0, 1}^n -> Y`` (majority vote in §8), including the k-ary label sets of App. C.2;
* the **relevant subset set** ``S_x ⊂ 2^x`` (§4) used by Challenge 1 (eq. 2).

Everything here is pure and deterministic: no I/O, no randomness.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal, Protocol, runtime_checkable

Label = int
Encoding = tuple[int, ...]
SubsetMode = Literal["whole", "substrings"]


class Criterion(ABC):
    """A criterion ``c: X -> {0, 1}`` (§5). Non-linear criteria expose their ``clauses`` (total rubric)."""

    name: str
    description: str

    @abstractmethod
    def __call__(self, x: str) -> int: ...

    @property
    def clauses(self) -> tuple[Criterion, ...]:
        """Sub-criteria a total evaluation tests separately (§5); empty for atomic criteria."""
        return ()

    def total(self) -> tuple[Criterion, ...]:
        """This criterion's contribution to ``C̄``: its clauses (recursively), then the criterion itself."""
        out: list[Criterion] = []
        for clause in self.clauses:
            out.extend(clause.total())
        out.append(self)
        return tuple(out)


@dataclass(frozen=True)
class Predicate(Criterion):
    """An atomic criterion given by a boolean test on the datapoint."""

    name: str
    description: str
    test: Callable[[str], bool] = field(repr=False, compare=False)

    def __call__(self, x: str) -> int:
        return int(bool(self.test(x)))


@dataclass(frozen=True)
class Compound(Criterion):
    """A non-linear criterion of arity > 1 (§5), e.g. the xor ``c_a ⊕ c_b`` of Table 1's IP ``c_1``."""

    name: str
    description: str
    parts: tuple[Criterion, ...]
    combine: Callable[..., int] = field(repr=False, compare=False)

    def __call__(self, x: str) -> int:
        return int(self.combine(*(part(x) for part in self.parts)))

    @property
    def clauses(self) -> tuple[Criterion, ...]:
        return self.parts


def xor(name: str, description: str, a: Criterion, b: Criterion) -> Compound:
    """``c = a ⊕ b``: the paper's example of a criterion the total rubric must decompose (§5, Table 1)."""
    return Compound(name, description, (a, b), lambda u, v: u ^ v)


# --- atomic criteria over bit strings (Table 1) -------------------------------------------------------------


def even_count(name: str, symbol: str, description: str | None = None) -> Predicate:
    return Predicate(name, description or f"x has an even number of {symbol}s", lambda x: x.count(symbol) % 2 == 0)


def count_greater(name: str, symbol: str, threshold: int, description: str | None = None) -> Predicate:
    return Predicate(
        name, description or f"x has strictly more than {threshold} {symbol}s", lambda x: x.count(symbol) > threshold
    )


def starts_with(name: str, prefix: str, description: str | None = None) -> Predicate:
    return Predicate(name, description or f"x starts with {prefix}", lambda x: x.startswith(prefix))


def ends_with(name: str, suffix: str, description: str | None = None) -> Predicate:
    return Predicate(name, description or f"x ends with {suffix}", lambda x: x.endswith(suffix))


def contains(name: str, pattern: str, description: str | None = None) -> Predicate:
    return Predicate(name, description or f"x contains the substring {pattern}", lambda x: pattern in x)


# --- aggregators σ (§5, App. C.2) ---------------------------------------------------------------------------


@runtime_checkable
class Aggregator(Protocol):
    """``σ: {0, 1}^n -> Y`` (§5). ``labels`` is the ordered label set ``{l_1, ..., l_k}``."""

    labels: tuple[Label, ...]

    def __call__(self, bits: Sequence[int]) -> Label: ...


@dataclass(frozen=True)
class MajorityVote:
    """σ of §8: majority vote over the criteria outputs.

    The paper does not say how to break ties (impossible with its 3 criteria); the authors' notebook
    breaks them towards 1, which we keep so even-sized rubrics behave the same way.
    """

    tie: Label = 1
    labels: tuple[Label, ...] = (0, 1)

    def __call__(self, bits: Sequence[int]) -> Label:
        ones = sum(bits)
        zeros = len(bits) - ones
        if ones == zeros:
            return self.tie
        return 1 if ones > zeros else 0


@dataclass(frozen=True)
class CountAggregator:
    """A k-ary σ: the label is the number of satisfied criteria (k = n + 1). Used for App. C.2 runs."""

    n: int

    @property
    def labels(self) -> tuple[Label, ...]:
        return tuple(range(self.n + 1))

    def __call__(self, bits: Sequence[int]) -> Label:
        return int(sum(bits))


@dataclass(frozen=True)
class Binarised:
    """App. C.2: one of the k-1 binary views of a k-ary σ: ``{l_j} -> 0``, every other label -> 1."""

    base: Aggregator
    positive: Label  # l_j, the label that maps to 0 in this run
    labels: tuple[Label, ...] = (0, 1)

    def __call__(self, bits: Sequence[int]) -> Label:
        return 0 if self.base(bits) == self.positive else 1


def decode_k_ary(binary_labels: Sequence[Label], label_set: Sequence[Label]) -> Label:
    """Invert the App. C.2 cascade: the first run ``j`` whose label is 0 gives ``l_j``; none gives ``l_k``."""
    if len(binary_labels) != len(label_set) - 1:
        raise ValueError(f"need {len(label_set) - 1} binary runs for {len(label_set)} labels, got {len(binary_labels)}")
    for j, b in enumerate(binary_labels):
        if b == 0:
            return label_set[j]
    return label_set[-1]


# --- the rubric C, its total form C̄, and f = σC ------------------------------------------------------------


@dataclass(frozen=True)
class Rubric:
    """An ordered set of criteria ``C`` with its aggregator σ, so ``f = σ C`` (Assumption 1, eq. 1)."""

    name: str
    criteria: tuple[Criterion, ...]
    aggregator: Aggregator = field(default_factory=MajorityVote)

    def evaluate(self, x: str) -> Encoding:
        """``C(x)``: the concatenated criteria outputs (§5)."""
        return tuple(c(x) for c in self.criteria)

    @cached_property
    def total_criteria(self) -> tuple[Criterion, ...]:
        """``C̄``: non-linear criteria preceded by their clauses, e.g. (c0, c1a, c1b, c1, c2) for IP."""
        out: list[Criterion] = []
        for c in self.criteria:
            out.extend(c.total())
        return tuple(out)

    @property
    def is_total(self) -> bool:
        """True when ``C̄ = C`` (no criterion needs decomposing), as for the OOP rubric of Table 1."""
        return len(self.total_criteria) == len(self.criteria)

    def evaluate_total(self, x: str) -> Encoding:
        """``C̄(x)``: the total evaluation (§5)."""
        return tuple(c(x) for c in self.total_criteria)

    def label(self, x: str) -> Label:
        """``f(x) = σ(C(x))`` (eq. 1)."""
        return self.aggregator(self.evaluate(x))

    @property
    def labels(self) -> tuple[Label, ...]:
        return tuple(self.aggregator.labels)

    def with_aggregator(self, aggregator: Aggregator, name: str | None = None) -> Rubric:
        return Rubric(name or self.name, self.criteria, aggregator)

    def describe(self) -> str:
        """Natural-language rubric, inserted at ``<NL RUBRIC GOES HERE>`` in the App. D prompts."""
        return "\n".join(f"- {c.name}: {c.description}" for c in self.criteria)

    def explain(self, x: str) -> str:
        """Criterion-by-criterion rationale for ``x`` (the chain-of-thought shape App. D.2 describes)."""
        lines = []
        for c in self.total_criteria:
            lines.append(f"- {c.name} ({c.description}): {c(x)}")
        lines.append(
            f"- {type(self.aggregator).__name__} over {[c.name for c in self.criteria]}"
            f" = {list(self.evaluate(x))} gives {self.label(x)}"
        )
        return "\n".join(lines)


def relevant_subsets(x: str, mode: SubsetMode = "whole") -> tuple[str, ...]:
    """The relevant subset set ``S_x ⊂ 2^x`` (§4).

    The paper defers the construction of ``S_x`` to "Section 6.1", which never gives it. Two readings:

    * ``"whole"``: ``S_x = {x}``. Eq. (2) then reduces to ``C̄(x') = C̄(x)``, which is exactly what the
      authors' notebook checks for Challenge 1 and what reproduces Tables 2-3 (the default).
    * ``"substrings"``: every contiguous non-empty substring of ``x`` (the subsets the notebook's
      ``what_matched_what`` enumerates); eq. (2) then asks every substring of ``x`` to have a substring of
      ``x'`` with the same total evaluation, a literal "equality up to permutation over subsets" (§4).
    """
    if mode == "whole":
        return (x,)
    if mode == "substrings":
        seen: dict[str, None] = {}
        for i in range(len(x)):
            for j in range(i + 1, len(x) + 1):
                seen.setdefault(x[i:j], None)
        return tuple(seen)
    raise ValueError(f"unknown S_x mode {mode!r}; expected 'whole' or 'substrings'")


# --- Table 1 ------------------------------------------------------------------------------------------------

_IP_C1A = starts_with("c1a", "0", "x starts with a zero")
_IP_C1B = contains("c1b", "10101", "x contains 10101")

#: In-phenomenon rubric (Table 1). The paper's ``c_0`` counts ones; the notebook that generated the data
#: counts zeros. For the 12-bit strings of the data set the two parities coincide (12 is even).
IP_RUBRIC = Rubric(
    "ip",
    (
        even_count("c0", "1", "y = 1 if x has an even number of ones; else 0"),
        xor("c1", "y = 1 if x starts with a zero or contains 10101, but not both; else 0", _IP_C1A, _IP_C1B),
        count_greater("c2", "1", 5, "y = 1 if x has strictly more than five ones; else 0"),
    ),
)

#: Out-of-phenomenon rubric (Table 1); it has no non-linear criterion, so ``C̄ = C``.
OOP_RUBRIC = Rubric(
    "oop",
    (
        contains("c0", "111", "y = 1 if x contains the substring 111; else 0"),
        ends_with("c1", "1", "y = 1 if x ends with a one; else 0"),
        contains("c2", "110001", "y = 1 if x contains the substring 110001; else 0"),
    ),
)

RUBRICS: dict[str, Rubric] = {"ip": IP_RUBRIC, "oop": OOP_RUBRIC}
