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

import json
from collections import Counter
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from voirdire.kit import Guarantee
from voirdire.kit.reports import round_up

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


MEASURED = Path(__file__).with_name("lie_pass_measured.json")


class MeasuredLiePass(BaseModel):
    """The liar that ``voirdire reproduce nodata-lemma1`` (``bench/no_data_lie_simulation.py``) saw get through most
    often, among those that do not know the total evaluation (the liars Lemma 1 is about), for one rubric and r."""

    rubric: str
    rounds: int
    strategy: str
    undetected: float
    ci_high: float
    trials: int


@cache
def measured_lie_pass() -> dict[tuple[str, int], MeasuredLiePass]:
    data = json.loads(MEASURED.read_text(encoding="utf-8"))
    rows = [MeasuredLiePass.model_validate(r) for r in data["rows"]]
    return {(r.rubric, r.rounds): r for r in rows}


def _pct(p: float, significant: int = 3) -> str:
    """A probability in percent, rounded up (``round_up``): 40.94% is "41%", never "40.9%"."""
    return f"{round_up(100 * p, significant):g}%"


def verdict_guarantee(rounds: int, phi: float, rounds_run: int, success: bool, rubric: str | None = None) -> Guarantee:
    """What the paper guarantees of one datapoint's verdict, and the risk the run can expect. Lemma 1 is a
    statement about one EV protocol sub-game, which a session is (one datapoint, ``r`` rounds), and eq. (8) about
    one mislabelled datapoint: both are per verdict, with the run's r and φ. Theorem 1 needs the evaluator's accuracy
    α over the data set, so it is the run's: the report prints it (``report.py``). Lemma 1 assumes a liar passes a
    round with probability 1/4; a liar that always passes one challenge passes with 1/2 (App. A.3's own cheat), and
    the simulated liars of ``reproduce nodata-lemma1`` get through far more often: the statement gives their
    measured rate for the run's rubric and r beside (1/4)^r, and eq. (8) with that rate. Every bound is rounded
    up."""
    lemma1 = lemma1_undetected_probability(rounds)
    eq8 = wrong_if_mislabelled_bound(phi, rounds)
    half = 0.5**rounds  # the module docstring's point 2: a liar that always passes one challenge
    measured = measured_lie_pass().get((rubric or "", rounds))
    # eq. (8) with the measured rate as printed (rounded up), so that the printed bound follows from printed numbers
    eq8_measured = None if measured is None else 1 - phi + phi * round_up(100 * measured.undetected) / 100
    if success:
        head = f"passed all {rounds} EV rounds: Lemma 1 puts a lie's chance of getting through {rounds} rounds at "
        head += f"(1/4)^{rounds} = {_pct(lemma1, 6)}"
    else:
        head = f"failed EV round {rounds_run} of {rounds}: the verifier caught the evaluator; its revealed label is "
        head += f"flipped with probability φ = {phi:g} (Alg. 1 line 10)"
    risk = (
        ""
        if not success
        else (
            "; Lemma 1 assumes a liar passes a round with probability 1/4, which does not hold for every liar: one "
            f"that always passes one of the two challenges gets through with (1/2)^{rounds} = {_pct(half, 6)} "
            "(App. A.3)"
        )
    )
    if success and measured is not None:
        risk += (
            f", and the liars of voirdire reproduce nodata-lemma1 get through up to {_pct(measured.undetected)} on "
            f"the {rubric.upper() if rubric else ''} rubric at r = {rounds} ({measured.strategy}, 95% CI up to "
            f"{_pct(measured.ci_high)})"
        )
    elif success:
        risk += " (no simulated rate for this rubric and r: run voirdire reproduce nodata-lemma1)"
    wrong = f"; a datapoint the evaluator mislabels ends wrong with probability ≤ {_pct(eq8)} with Lemma 1's rate"
    wrong += " (1 − φ + φ(1/4)^r, App. A.4 eq. 8)"
    if eq8_measured is not None:
        wrong += f", ≤ {_pct(eq8_measured)} with the measured rate (1 − φ + φ·{_pct(measured.undetected)})"  # type: ignore[union-attr]
    return Guarantee(
        kind="ev_protocol_bound",
        statement=f"{head}{risk}{wrong}; Theorem 1 over the run needs α: see the report",
        values={
            "rounds": rounds,
            "phi": phi,
            "rounds_run": rounds_run,
            "passed": success,
            "lemma1_undetected": lemma1,
            "one_challenge_liar_undetected": half,
            "wrong_if_mislabelled": eq8,
            "measured_lie_pass": None if measured is None else measured.undetected,
            "measured_lie_pass_ci_high": None if measured is None else measured.ci_high,
            "measured_liar": None if measured is None else measured.strategy,
            "wrong_if_mislabelled_measured": eq8_measured,
        },
        source="§7.1 Lemma 1 and Theorem 1, eq. (3); App. A.3-A.4 eqs. (7)-(9); the measured rate: "
        "voirdire reproduce nodata-lemma1",
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
