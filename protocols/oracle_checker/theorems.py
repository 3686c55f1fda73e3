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
    read = "; ".join(f"{e:g}-far passes with probability ≤ {b:.3g}" for e, b in zip(epsilons, bounds, strict=True))
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
    """The "no" answer's guarantee (§4, Fig. 4): an oracle that cannot tell which of s1, s2 an indifferentiable
    paraphrase p came from answers ``passed`` coin-toss queries right with probability at most ``2^-passed``, as
    in the graph non-isomorphism test. It holds only as far as p is indifferentiable from the checker's view
    (§4.1), so only in categories AI and ĀI; with no indifferentiable paraphrase (Ī) there is no bound."""
    if passed < 1 or not category.endswith("I") or category.endswith("Ī"):
        return None
    bound = 0.5**passed
    return VerdictGuarantee(
        kind="non_isomorphism_bound",
        statement=f"the oracle kept its \"no\" through {passed} coin-toss test(s) with an indifferentiable "
        f"paraphrase: an oracle that cannot tell s1 from s2 passes with probability ≤ 2^-{passed} = {bound:g} "
        f"(category {category})",
        values={"tests_passed": passed, "pass_probability_bound": bound, "category": category},
        source="§4 graph non-isomorphism test (1/2^n), approximated by indifferentiable paraphrases (§4.1, Fig. 4)",
    )
