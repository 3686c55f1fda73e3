"""What an acceptance by the linearity checker guarantees: Theorems 3.1 and 3.2 of §3 (Zeng, Wang, Ibbetson).

Theorem 3.1: one linearity test on an f that is ε-far from every homomorphism fails with probability at least
``3ε − 6ε²`` when ε ≤ 1/4, and at least 2/9 otherwise. Theorem 3.2: n = Θ(1/ε) independent tests reject such an f
with probability at least 2/3. §3's worked reading: after n passing tests, f is ε-close to a homomorphism with
probability roughly ``1 − (1 − 3ε + 6ε²)^n`` (10 tests: ε = 0.1 → ≈ 0.936, ε = 0.05 → ≈ 0.765). The bounds do not
depend on the group sizes (the number of entities).
"""

from __future__ import annotations

from pydantic import BaseModel

from voirdire.kit import Guarantee as VerdictGuarantee
from voirdire.kit.reports import round_up


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


def pass_bound(n: int, epsilon: float) -> float:
    """The most probability with which an ``epsilon``-far f passes ``n`` independent tests: ``(1 − p)^n`` with p
    Theorem 3.1's least failure probability of one test (``1 − rejection_bound``)."""
    return 1 - rejection_bound(n, epsilon)


def acceptance_guarantee(n: int, passed: int, epsilons: tuple[float, ...]) -> VerdictGuarantee:
    """The verdict's guarantee (§3, Theorems 3.1-3.2): for each ε, the most probability that an extraction ε-far
    from every homomorphism passes all ``n`` tests, and §3's reading of an acceptance (ε-close with probability
    ``1 − (1 − 3ε + 6ε²)^n``). A rejection needs no bound: a homomorphism passes every test (Theorem 3.1)."""
    bounds = [pass_bound(n, e) for e in epsilons]
    read = "; ".join(
        f"{e:g}-far passes with probability ≤ {round_up(b):g}" for e, b in zip(epsilons, bounds, strict=True)
    )
    if passed == n:
        head = f"all {n} linearity tests passed: an extraction {read}"
    else:
        head = f"{n - passed} of {n} tests failed: a linear extraction passes every test (Theorem 3.1), so this one "
        head += f"is not linear on s; had all passed: an extraction {read}"
    return VerdictGuarantee(
        kind="linearity_acceptance_bound",
        statement=f"{head} (the bound (1 − p)^{n}, p = 3ε − 6ε² per test for ε ≤ 1/4, 2/9 above: Theorem 3.1)",
        values={
            "tests": n,
            "passed": passed,
            "epsilons": list(epsilons),
            "pass_probability_bounds": bounds,
            "confidence": [1 - b for b in bounds],
        },
        source="§3 Theorems 3.1-3.2 and the reading after them (10 tests, ε = 0.1: ≈ 0.936)",
    )


def indifferentiability_guarantee(passed: int, category: str) -> VerdictGuarantee | None:
    """What the "no" answer's trust test (§4, Fig. 4) lets one say: the oracle kept its "no" through ``passed``
    tests with a paraphrase p that is indifferentiable from the checker's viewpoint (§4.1), so the checker found no
    triangular evidence (App. B.4). §4 gives no probability for this test: its 1/2^n is for graph non-isomorphism,
    where the oracle must say which of g1, g2 a permuted copy came from and guesses when it cannot tell them apart.
    Here the oracle is asked whether the other sentence and p are equivalent, and one that always answers "no"
    passes every test, so no bound is stated. Only in categories AI and ĀI (an indifferentiable p was found)."""
    if passed < 1 or not category.endswith("I") or category.endswith("Ī"):
        return None
    return VerdictGuarantee(
        kind="non_equivalence_test",
        statement=f'the oracle kept its "no" through {passed} test(s) with a paraphrase indifferentiable from the '
        f"checker's viewpoint (category {category}): no triangular evidence against it; the paper gives this test no "
        'probability bound (§4\'s 1/2^n is for graph non-isomorphism), and an oracle that always answers "no" '
        "passes it",
        values={"tests_passed": passed, "category": category},
        source="§4 (graph non-isomorphism: 1/2^n for an oracle that guesses), §4.1 and Fig. 4 (indifferentiable "
        "paraphrases, 'strictly from the checker's viewpoint'), App. B.4 (triangular evidence)",
    )
