"""Lemma 1 and Theorem 1 (§7.1, App. A), plus exact per-round pass probabilities for finite generators.

* **Lemma 1**: the verifier fails to detect a lie after ``r`` rounds with probability ``(1/4)^r``.
* **Theorem 1**, eq. (3): with evaluator accuracy α, flip probability φ and ``r`` rounds,
  ``E[correct] ≤ 1 - (1 - α)(1 - φ + φ (1/4)^r)``.

Two things the code makes explicit rather than silently "fixing":

1. Eq. (3) is printed with ``≤``, but its proof (App. A.4, eqs. 7-9) upper-bounds ``E[wrong]``, which makes
   the same expression a **lower** bound on accuracy. ``theorem1_accuracy_bound`` returns the expression;
   ``TheoryReport.theorem1_direction`` records which way it is used.
2. Lemma 1's per-round 1/4 assumes a liar passes each round w.p. 1/4. A liar that can always pass one of the
   two challenges passes a round w.p. at least 1/2 (the verifier draws *that* challenge half the time), so its
   undetected rate is at least ``(1/2)^r``. ``bench/no_data_lie_simulation.py`` measures this.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel

from voirdire.kit import Guarantee

from .challenges import Challenge, RuleVerifier
from .generators import Mixture
from .rubric import Encoding

LEMMA1_PER_ROUND = 0.25


def lemma1_undetected_probability(rounds: int) -> float:
    """Lemma 1: a lie survives ``rounds`` EV rounds w.p. ``(1/4)^r`` (1.6% at r = 3, Remark 3)."""
    if rounds < 0:
        raise ValueError("rounds must be non-negative")
    return LEMMA1_PER_ROUND**rounds


def theorem1_accuracy_bound(alpha: float, phi: float, rounds: int) -> float:
    """Theorem 1, eq. (3): ``1 - (1 - α)(1 - φ + φ (1/4)^r)``, with φ the probability of flipping a failed
    label as Alg. 1 defines it (line 10: "ỹ ← ¬y with probability φ")."""
    for name, value in (("alpha", alpha), ("phi", phi)):
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"{name} must be in [0, 1], got {value}")
    u = lemma1_undetected_probability(rounds)
    return 1.0 - (1.0 - alpha) * (1.0 - phi + phi * u)


def wrong_if_mislabelled_bound(phi: float, rounds: int) -> float:
    """App. A.4, eq. (8): a datapoint the evaluator mislabels ends with a wrong label with probability at most
    ``(1/4)^r + (1 − φ)(1 − (1/4)^r) = 1 − φ + φ (1/4)^r`` (undetected, or detected and not flipped). Eq. (9)
    multiplies it by ε = 1 − α over the data set, which is Theorem 1."""
    u = lemma1_undetected_probability(rounds)
    return u + (1.0 - phi) * (1.0 - u)


def verdict_guarantee(rounds: int, phi: float, rounds_run: int, success: bool) -> Guarantee:
    """What the paper guarantees of one datapoint's verdict. Lemma 1 is a statement about one EV protocol
    sub-game, which a session is (one datapoint, ``r`` rounds), and eq. (8) about one mislabelled datapoint: both
    are per verdict, with the run's r and φ. Theorem 1 needs the evaluator's accuracy α over the data set, so it
    is the run's: the report prints it (``report.py``, with α the revealed labels' accuracy). The statement gives
    Lemma 1's rate as the paper states it, beside the (1/2)^r of a liar that always passes one challenge (point 2
    above; docs/no_data.md measures both)."""
    lemma1 = lemma1_undetected_probability(rounds)
    eq8 = wrong_if_mislabelled_bound(phi, rounds)
    half = 0.5**rounds  # the module docstring's point 2: a liar that always passes one challenge
    if success:
        head = f"passed all {rounds} EV rounds: Lemma 1 puts a lie's chance of getting through {rounds} rounds at "
        head += f"(1/4)^{rounds} = {100 * lemma1:.3g}% (a liar that always passes one of the two challenges gets "
        head += f"through with (1/2)^{rounds} = {100 * half:.3g}%)"
    else:
        head = f"failed EV round {rounds_run} of {rounds}: the verifier caught the evaluator; its revealed label is "
        head += f"flipped with probability φ = {phi:g} (Alg. 1 line 10)"
    return Guarantee(
        kind="ev_protocol_bound",
        statement=f"{head}; with Lemma 1's rate, a datapoint the evaluator mislabels ends wrong with probability ≤ "
        f"1 − φ + φ(1/4)^r = {100 * eq8:.3g}% (App. A.4 eq. 8; Theorem 1 over the run needs α: see the report)",
        values={
            "rounds": rounds,
            "phi": phi,
            "rounds_run": rounds_run,
            "passed": success,
            "lemma1_undetected": lemma1,
            "one_challenge_liar_undetected": half,
            "wrong_if_mislabelled": eq8,
        },
        source="§7.1 Lemma 1 and Theorem 1, eq. (3); App. A.3-A.4 eqs. (7)-(9)",
    )


class TheoryReport(BaseModel):
    """The bounds printed next to a run."""

    rounds: int
    phi: float
    lemma1_undetected: float
    alpha: float | None = None
    theorem1_bound: float | None = None
    theorem1_direction: Literal["lower bound on accuracy (proof, eqs. 7-9)"] = (
        "lower bound on accuracy (proof, eqs. 7-9)"
    )


def theory_report(rounds: int, phi: float, alpha: float | None = None) -> TheoryReport:
    """Lemma 1 always; Theorem 1 when the evaluator's accuracy α is known (it needs references)."""
    return TheoryReport(
        rounds=rounds,
        phi=phi,
        lemma1_undetected=lemma1_undetected_probability(rounds),
        alpha=alpha,
        theorem1_bound=None if alpha is None else theorem1_accuracy_bound(alpha, phi, rounds),
    )


# --- exact pass probabilities for generators that sample uniformly from finite sets -------------------------

_COUNTS: dict[tuple[int, str], tuple[Sequence[str], Counter[Encoding], Counter[Encoding]]] = {}


def _encoding_counts(strings: Sequence[str], verifier: RuleVerifier) -> tuple[Counter[Encoding], Counter[Encoding]]:
    key = (id(strings), verifier.rubric.name)
    hit = _COUNTS.get(key)
    if hit is None or hit[0] is not strings:
        rubric = verifier.rubric
        total = Counter(rubric.evaluate_total(s) for s in strings)
        plain = Counter(rubric.evaluate(s) for s in strings)
        hit = _COUNTS[key] = (strings, total, plain)
    return hit[1], hit[2]


def challenge_pass_probabilities(x: str, mixture: Mixture, verifier: RuleVerifier) -> tuple[float, float]:
    """``(P[pass Challenge 1], P[pass Challenge 2])`` for one round when ``x'`` is drawn from ``mixture``.

    Exact for the default verifier (``S_x = {x}``, strict Challenge 2); otherwise every candidate is checked.
    """
    p1 = p2 = 0.0
    for weight, strings in mixture:
        if not strings or weight == 0.0:
            continue
        if verifier.subsets == "whole" and verifier.epsilon is None:
            total, plain = _encoding_counts(strings, verifier)
            p1 += weight * total[verifier.rubric.evaluate_total(x)] / len(strings)
            p2 += weight * plain[verifier.rubric.evaluate(x)] / len(strings)
        else:
            c1 = sum(verifier.check_sync(Challenge.EQUALITY_UP_TO_PERMUTATION, x, s).passed for s in strings)
            c2 = sum(verifier.check_sync(Challenge.EQUALITY_UP_TO_ISOMORPHISM, x, s).passed for s in strings)
            p1 += weight * c1 / len(strings)
            p2 += weight * c2 / len(strings)
    return p1, p2


def round_pass_probability(x: str, mixture: Mixture, verifier: RuleVerifier) -> float:
    """Per-round pass probability: the verifier picks each challenge w.p. 1/2 (§6.1.1)."""
    p1, p2 = challenge_pass_probabilities(x, mixture, verifier)
    return 0.5 * (p1 + p2)
