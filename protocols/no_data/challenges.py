"""The verifier's two challenges of the EV protocol (§6.1.1) and the distance relaxation of App. C.1.

* **Challenge 1** (equality up to permutation): eq. (2),
  ``∀ s ∈ S_x ∃ t ∈ S_x' . ∀ c ∈ C̄ : c(s) = c(t)``.
* **Challenge 2** (equality up to isomorphism): ``C(x') = C(x)``; App. C.1 relaxes it to
  "fail iff ``δ(C(x), C(x')) ≥ ε``" for a metric δ and ``ε ∈ [0, 1/2]``.

Neither challenge looks at σ or at any label (§6.1: "neither of which rely on σ or y").
The verifier draws one of them uniformly at random every round (§6.1.1).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from .rubric import Encoding, Rubric, SubsetMode, relevant_subsets

if TYPE_CHECKING:  # a type only: the registration (`voirdire --help`) does not import numpy
    import numpy as np

Distance = Callable[[Encoding, Encoding], float]


class Challenge(IntEnum):
    """The two challenges of §6.1.1, numbered as in the paper."""

    EQUALITY_UP_TO_PERMUTATION = 1
    EQUALITY_UP_TO_ISOMORPHISM = 2


class CheckOutcome(BaseModel):
    """Result of one challenge check; ``reason`` says why it failed (empty on a pass)."""

    challenge: int
    passed: bool
    reason: str = ""
    detail: dict[str, Any] = Field(default_factory=dict)


def normalized_hamming(a: Encoding, b: Encoding) -> float:
    """Fraction of criteria on which two encodings differ; the default δ for App. C.1."""
    if len(a) != len(b):
        raise ValueError(f"encodings differ in length: {len(a)} vs {len(b)}")
    if not a:
        return 0.0
    return sum(u != v for u, v in zip(a, b, strict=True)) / len(a)


def malformed(x: str, x_prime: str) -> str | None:
    """Why ``x'`` cannot be compared with ``x`` (§4: both must be n-bit strings), or None if it can."""
    if not x_prime or any(ch not in "01" for ch in x_prime):
        return f"x' = {x_prime!r} is not a bit string"
    if len(x_prime) != len(x):
        return f"x' has {len(x_prime)} bits, x has {len(x)}"
    return None


def _names_differing(rubric_names: Sequence[str], a: Encoding, b: Encoding) -> list[str]:
    return [name for name, u, v in zip(rubric_names, a, b, strict=True) if u != v]


def challenge_1(x: str, x_prime: str, rubric: Rubric, subsets: SubsetMode = "whole") -> CheckOutcome:
    """Challenge 1, eq. (2): every relevant subset of ``x`` has a counterpart in ``x'`` under ``C̄``.

    With ``subsets="whole"`` (``S_x = {x}``) this is ``C̄(x') = C̄(x)``; see ``rubric.relevant_subsets``.
    """
    number = int(Challenge.EQUALITY_UP_TO_PERMUTATION)
    bad = malformed(x, x_prime)
    if bad:
        return CheckOutcome(challenge=number, passed=False, reason=bad)
    names = [c.name for c in rubric.total_criteria]
    if subsets == "whole":
        want, got = rubric.evaluate_total(x), rubric.evaluate_total(x_prime)
        if want == got:
            return CheckOutcome(challenge=number, passed=True, detail={"total": list(got)})
        differing = _names_differing(names, want, got)
        return CheckOutcome(
            challenge=number,
            passed=False,
            reason=f"C̄(x') differs from C̄(x) on {', '.join(differing)}",
            detail={"total_x": list(want), "total_x_prime": list(got), "differing": differing},
        )
    available = {rubric.evaluate_total(t) for t in relevant_subsets(x_prime, subsets)}
    for s in relevant_subsets(x, subsets):
        target = rubric.evaluate_total(s)
        if target not in available:
            return CheckOutcome(
                challenge=number,
                passed=False,
                reason=f"no t in S_x' matches s = {s!r} on every c in C̄",
                detail={"s": s, "total_s": list(target)},
            )
    return CheckOutcome(challenge=number, passed=True)


def challenge_2(
    x: str,
    x_prime: str,
    rubric: Rubric,
    epsilon: float | None = None,
    distance: Distance = normalized_hamming,
) -> CheckOutcome:
    """Challenge 2: ``C(x') = C(x)``; with ``epsilon`` set, App. C.1's "fail iff δ(C(x), C(x')) ≥ ε".

    Read literally, App. C.1 with ``ε = 0`` fails every pair (δ ≥ 0 always), so strict equality is
    spelled ``epsilon=None`` and a relaxation needs ``0 < ε ≤ 1/2``.
    """
    number = int(Challenge.EQUALITY_UP_TO_ISOMORPHISM)
    bad = malformed(x, x_prime)
    if bad:
        return CheckOutcome(challenge=number, passed=False, reason=bad)
    want, got = rubric.evaluate(x), rubric.evaluate(x_prime)
    detail: dict[str, Any] = {"encoding_x": list(want), "encoding_x_prime": list(got)}
    if epsilon is None:
        if want == got:
            return CheckOutcome(challenge=number, passed=True, detail=detail)
        differing = _names_differing([c.name for c in rubric.criteria], want, got)
        return CheckOutcome(
            challenge=number,
            passed=False,
            reason=f"C(x') differs from C(x) on {', '.join(differing)}",
            detail={**detail, "differing": differing},
        )
    d = float(distance(want, got))
    detail["distance"] = d
    if d >= epsilon:
        return CheckOutcome(
            challenge=number, passed=False, reason=f"δ(C(x), C(x')) = {d:.3f} ≥ ε = {epsilon}", detail=detail
        )
    return CheckOutcome(challenge=number, passed=True, detail=detail)


@runtime_checkable
class Verifier(Protocol):
    """The verifier V of §6: draws a challenge each round and checks the evaluator's ``x'`` against it.

    ``check`` is async so an LLM-backed verifier can implement the same interface later.
    """

    def draw(self, rng: np.random.Generator) -> Challenge: ...

    async def check(self, challenge: Challenge, x: str, x_prime: str) -> CheckOutcome: ...


@dataclass(frozen=True)
class RuleVerifier:
    """§8.0.3: a rule-matching verifier that knows the rubric of the phenomenon under test (not σ).

    ``epsilon`` switches Challenge 2 to App. C.1's distance form; ``subsets`` picks the ``S_x`` reading.
    """

    rubric: Rubric
    subsets: SubsetMode = "whole"
    epsilon: float | None = None
    distance: Distance = field(default=normalized_hamming, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.epsilon is not None and not 0 < self.epsilon <= 0.5:
            raise ValueError(
                f"epsilon must be in (0, 1/2] (App. C.1), got {self.epsilon}; use None for strict equality"
            )

    def draw(self, rng: np.random.Generator) -> Challenge:
        # §6.1.1: "the verifier then chooses uniformly at random one of the two following challenges".
        return Challenge(int(rng.integers(1, 3)))

    def check_sync(self, challenge: Challenge, x: str, x_prime: str) -> CheckOutcome:
        if challenge is Challenge.EQUALITY_UP_TO_PERMUTATION:
            return challenge_1(x, x_prime, self.rubric, self.subsets)
        return challenge_2(x, x_prime, self.rubric, self.epsilon, self.distance)

    async def check(self, challenge: Challenge, x: str, x_prime: str) -> CheckOutcome:
        return self.check_sync(challenge, x, x_prime)
