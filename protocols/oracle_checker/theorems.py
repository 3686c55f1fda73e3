"""What an acceptance by the linearity checker guarantees: Theorems 3.1 and 3.2 of §3 (Zeng, Wang, Ibbetson).

Theorem 3.1: one linearity test on an f that is ε-far from every homomorphism fails with probability at least
``3ε − 6ε²`` when ε ≤ 1/4, and at least 2/9 otherwise. Theorem 3.2: n = Θ(1/ε) independent tests reject such an f
with probability at least 2/3. §3's worked reading: after n passing tests, f is ε-close to a homomorphism with
probability roughly ``1 − (1 − 3ε + 6ε²)^n`` (10 tests: ε = 0.1 → ≈ 0.936, ε = 0.05 → ≈ 0.765). The bounds do not
depend on the group sizes (the number of entities).
"""

from __future__ import annotations

from pydantic import BaseModel


def failure_bound(epsilon: float) -> float:
    """Theorem 3.1: the least probability that one test fails on an f that is ``epsilon``-far from linear."""
    if not 0 < epsilon <= 1:
        raise ValueError(f"epsilon must be in (0, 1], got {epsilon}")
    return 3 * epsilon - 6 * epsilon**2 if epsilon <= 0.25 else 2 / 9


def rejection_bound(n: int, epsilon: float) -> float:
    """Theorem 3.2 / §3: the least probability that ``n`` independent tests reject an ``epsilon``-far f."""
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    return 1 - (1 - failure_bound(epsilon)) ** n


class Guarantee(BaseModel):
    """What an acceptance after ``tests`` passing tests says for one ε (§3, after Theorem 3.2)."""

    tests: int
    epsilon: float
    confidence: float

    def text(self) -> str:
        return (
            f"{self.tests} passing tests: f is {self.epsilon:g}-close to a homomorphism with probability "
            f"≈ {self.confidence:.3f} (Theorem 3.1/3.2: 1 − (1 − p)^{self.tests}, p = "
            f"{failure_bound(self.epsilon):.4g})"
        )


def guarantees(n: int, epsilons: tuple[float, ...]) -> list[Guarantee]:
    """The guarantee of an acceptance after ``n`` tests, for each chosen ε."""
    return [Guarantee(tests=n, epsilon=e, confidence=rejection_bound(n, e)) for e in epsilons]
