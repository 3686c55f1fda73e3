"""The EV protocol (§6.1) and the No-Data Algorithm (Algorithm 1), plus the k-ary extension (App. C.2).

The EV protocol is a small state machine between an evaluator and a verifier::

    for round in 1..r:                      # §6.1.2: "until ... r has been reached, or the evaluator fails"
        ŷ      <- E.label(x)                # the evaluator's label for x this round
        x', ỹ' <- E.propose(x, ŷ)           # §6.1.1: similar x' and partial label, fixed for the round
        k      <- V.draw()                  # Challenge 1 or 2, uniformly at random
        ok     <- V.check(k, x, x')         # eq. (2) or C(x') = C(x)
        emit round record; stop on failure  # first failure ends the session
    return success, ỹ'                      # the label is revealed either way

Algorithm 1 then keeps ``ỹ'`` on success and flips it **with probability φ** on failure (line 10). That is
the paper's definition; the authors' notebook flips with probability ``1 - φ`` (see docs/no_data.md).

Every round emits ``on_event("nodata.round", {...})`` and every datapoint ``on_event("nodata.decision",
{...})`` (the flip is Alg. 1's decision, taken after the EV protocol returns, so it lives in the decision
record). Randomness is per datapoint — ``SeedSequence(seed, spawn_key=(run, index))`` split into evaluator,
verifier and flip streams — so results depend only on the seed, not on order or concurrency.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from .challenges import Challenge, Verifier
from .evaluators import BinarisedLabeller, ComposedEvaluator, Evaluator, Labeller
from .generators import Generator
from .rubric import Label, decode_k_ary

OnEvent = Callable[[str, dict[str, Any]], None]

EVENT_ROUND = "nodata.round"
EVENT_DECISION = "nodata.decision"


class NoDataParams(BaseModel):
    """Inputs of Algorithm 1 besides the data and the players: rounds ``r``, flip probability φ, seed."""

    rounds: int = Field(3, ge=1, description="EV rounds r (§8 uses 3)")
    phi: float = Field(0.6, ge=0.0, le=1.0, description="P(flip a failed label), Alg. 1 line 10")
    seed: int = Field(0, ge=0)


class RoundRecord(BaseModel):
    """One EV round: ``x'``, ``ỹ'``, the challenge drawn and the check outcome (issue item 5)."""

    run: int = 0
    index: int
    round: int
    x: str
    y_hat: Label
    x_prime: str
    y_tilde: Label
    challenge: int
    challenge_name: str
    passed: bool
    reason: str = ""
    strategy: str = ""


class EVResult(BaseModel):
    """What the EV protocol returns: success and the revealed partial label ``ỹ'`` (§6.1.2)."""

    success: bool
    y_tilde: Label
    rounds: list[RoundRecord]


class Decision(BaseModel):
    """Algorithm 1's outcome for one datapoint."""

    run: int = 0
    index: int
    x: str
    success: bool
    revealed: Label = Field(description="ỹ' returned by the EV protocol")
    flipped: bool
    label: Label = Field(description="the label Alg. 1 outputs for x")
    rounds_run: int


@dataclass(frozen=True)
class DatapointRNG:
    evaluator: np.random.Generator
    verifier: np.random.Generator
    flip: np.random.Generator


def datapoint_rngs(seed: int, index: int, run: int = 0) -> DatapointRNG:
    """Independent evaluator / verifier / flip streams for one datapoint of one run."""
    ev, ver, flip = np.random.SeedSequence(seed, spawn_key=(run, index)).spawn(3)
    return DatapointRNG(np.random.default_rng(ev), np.random.default_rng(ver), np.random.default_rng(flip))


def _emit(on_event: OnEvent | None, kind: str, data: dict[str, Any]) -> None:
    if on_event is not None:
        on_event(kind, data)


async def ev_protocol(
    x: str,
    evaluator: Evaluator,
    verifier: Verifier,
    rounds: int,
    rng: DatapointRNG,
    *,
    index: int = 0,
    run: int = 0,
    on_event: OnEvent | None = None,
) -> EVResult:
    """The Evaluator-Verifier protocol of §6.1 for one datapoint (Alg. 1 line 5, ``EV(x, E, V, C, r)``)."""
    if rounds < 1:
        raise ValueError("the EV protocol needs at least one round")
    records: list[RoundRecord] = []
    y_tilde: Label = 0
    for r in range(rounds):
        y_hat = await evaluator.label(x, r, rng.evaluator)
        proposal = await evaluator.propose(x, y_hat, r, rng.evaluator)
        challenge = verifier.draw(rng.verifier)
        outcome = await verifier.check(challenge, x, proposal.x_prime)
        y_tilde = proposal.y_tilde
        record = RoundRecord(
            run=run,
            index=index,
            round=r,
            x=x,
            y_hat=y_hat,
            x_prime=proposal.x_prime,
            y_tilde=y_tilde,
            challenge=int(challenge),
            challenge_name=Challenge(challenge).name.lower(),
            passed=outcome.passed,
            reason=outcome.reason,
            strategy=proposal.strategy,
        )
        records.append(record)
        _emit(on_event, EVENT_ROUND, record.model_dump())
        if not outcome.passed:
            # §6.1.2: a failed test ends the protocol in a failure state; ỹ' is still revealed.
            return EVResult(success=False, y_tilde=y_tilde, rounds=records)
    return EVResult(success=True, y_tilde=y_tilde, rounds=records)


def flip_decision(success: bool, y: Label, phi: float, rng: np.random.Generator) -> tuple[Label, bool]:
    """Algorithm 1, lines 6-12: keep ``y`` on success; on failure output ``¬y`` with probability φ.

    ``rng.random()`` lies in [0, 1), so φ = 0 never flips and φ = 1 always flips a failed label.
    """
    if success:
        return y, False
    if y not in (0, 1):
        raise ValueError(f"Alg. 1 flips binary labels; got {y!r} (binarise k-ary labels first, App. C.2)")
    if rng.random() < phi:
        return 1 - y, True
    return y, False


async def label_datapoint(
    x: str,
    index: int,
    evaluator: Evaluator,
    verifier: Verifier,
    params: NoDataParams,
    *,
    run: int = 0,
    on_event: OnEvent | None = None,
) -> Decision:
    """One iteration of Algorithm 1's loop (lines 5-13) — the unit a Session runs per item."""
    rng = datapoint_rngs(params.seed, index, run)
    ev = await ev_protocol(x, evaluator, verifier, params.rounds, rng, index=index, run=run, on_event=on_event)
    label, flipped = flip_decision(ev.success, ev.y_tilde, params.phi, rng.flip)
    decision = Decision(
        run=run,
        index=index,
        x=x,
        success=ev.success,
        revealed=ev.y_tilde,
        flipped=flipped,
        label=label,
        rounds_run=len(ev.rounds),
    )
    _emit(on_event, EVENT_DECISION, decision.model_dump())
    return decision


class NoDataRun(BaseModel):
    """Algorithm 1's return value (predictions, successes) plus the flips and per-datapoint decisions."""

    decisions: list[Decision]

    @property
    def predictions(self) -> list[Label]:
        return [d.label for d in self.decisions]

    @property
    def revealed(self) -> list[Label]:
        return [d.revealed for d in self.decisions]

    @property
    def successes(self) -> list[int]:
        return [int(d.success) for d in self.decisions]

    @property
    def flips(self) -> list[int]:
        return [int(d.flipped) for d in self.decisions]

    @property
    def success_rate(self) -> float:
        return sum(self.successes) / len(self.decisions) if self.decisions else 0.0

    @property
    def flip_rate(self) -> float:
        """Flips over *all* datapoints, as Tables 2-3 report them."""
        return sum(self.flips) / len(self.decisions) if self.decisions else 0.0


async def no_data_algorithm(
    xs: Sequence[str],
    evaluator: Evaluator,
    verifier: Verifier,
    params: NoDataParams,
    *,
    run: int = 0,
    on_event: OnEvent | None = None,
    concurrency: int = 1,
) -> NoDataRun:
    """Algorithm 1 over a data set. Results are identical for any ``concurrency`` (per-datapoint RNGs)."""
    if concurrency <= 1:
        decisions = [
            await label_datapoint(x, i, evaluator, verifier, params, run=run, on_event=on_event)
            for i, x in enumerate(xs)
        ]
        return NoDataRun(decisions=decisions)
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int, x: str) -> Decision:
        async with gate:
            return await label_datapoint(x, i, evaluator, verifier, params, run=run, on_event=on_event)

    return NoDataRun(decisions=list(await asyncio.gather(*(one(i, x) for i, x in enumerate(xs)))))


def run_no_data(
    xs: Sequence[str], evaluator: Evaluator, verifier: Verifier, params: NoDataParams, on_event: OnEvent | None = None
) -> NoDataRun:
    """Synchronous convenience wrapper (scripts and benchmarks)."""
    return asyncio.run(no_data_algorithm(xs, evaluator, verifier, params, on_event=on_event))


# --- App. C.2: k-ary label sets -----------------------------------------------------------------------------


class KAryRun(BaseModel):
    """The k-1 binary runs of App. C.2 and their decoded k-ary labels."""

    label_set: list[Label]
    runs: list[NoDataRun]
    labels: list[Label]

    @property
    def successes(self) -> list[int]:
        """A datapoint succeeds only if it convinced the verifier in every binary run."""
        return [int(all(run.decisions[i].success for run in self.runs)) for i in range(len(self.labels))]

    @property
    def success_rate(self) -> float:
        s = self.successes
        return sum(s) / len(s) if s else 0.0


async def no_data_k_ary(
    xs: Sequence[str],
    labeller: Labeller,
    generator_for: Callable[[Label], Generator],
    verifier: Verifier,
    label_set: Sequence[Label],
    params: NoDataParams,
    *,
    on_event: OnEvent | None = None,
) -> KAryRun:
    """App. C.2: rerun Algorithm 1 ``k - 1`` times; run ``j`` maps ``{l_j} -> 0`` and the rest to 1.

    The paper gives only the mapping; we decode with the cascade "first run that says 0 gives ``l_j``, none
    gives ``l_k``". ``generator_for(l_j)`` builds run ``j``'s generator (a liar that targets a label must see
    the binarised σ). The challenges never look at labels, so the verifier is shared.
    """
    if len(label_set) < 2:
        raise ValueError("a label set needs at least two labels")
    runs: list[NoDataRun] = []
    for j, positive in enumerate(label_set[:-1]):
        evaluator = ComposedEvaluator(BinarisedLabeller(labeller, positive), generator_for(positive))
        runs.append(await no_data_algorithm(xs, evaluator, verifier, params, run=j, on_event=on_event))
    labels = [decode_k_ary([run.decisions[i].label for run in runs], label_set) for i in range(len(xs))]
    return KAryRun(label_set=list(label_set), runs=runs, labels=labels)
