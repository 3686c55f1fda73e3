"""The pieces Algorithm 1 is made of (§6, Alg. 1, App. C.2); the loop itself is ``NoDataProtocol.run``.

* ``RoundRecord``: one EV round (§6.1): ``x'``, ``ỹ'``, the challenge the verifier drew and the outcome.
* ``Decision``: Algorithm 1's outcome for one datapoint: the EV success, the revealed ``ỹ'``, the flip and the
  label it outputs.
* ``flip_decision``: lines 6-12, keep ``ỹ'`` on success and flip it **with probability φ** on failure (line 10).
  That is the paper's definition; the authors' notebook flips with probability ``1 - φ`` (see docs/no_data.md).
* ``coins``: the random streams of one datapoint, ``SeedSequence(seed, spawn_key=(run, index, player))`` for the
  evaluator, the verifier, the flip and a rule generator beside an LLM evaluator. Each player holds its own
  stream, so a datapoint's outcome depends only on the seed and its row: not on order, concurrency or resume.
* ``NoDataRun``: Alg. 1's return value (predictions, successes) with the flips; ``KAryRun``: the ``k - 1``
  binary runs of App. C.2 and their decoded labels.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from voirdire.kit import Statistics

from .rubric import Label

if TYPE_CHECKING:  # numpy is imported by a session's coins, not by the registration (`voirdire --help`)
    import numpy as np

ROUND_STEP = "nodata.round"
DECISION_STEP = "nodata.decision"

Player = Literal["evaluator", "verifier", "flip", "generator"]
_STREAM: dict[str, int] = {"evaluator": 0, "verifier": 1, "flip": 2, "generator": 3}


class AlgorithmParams(BaseModel):
    """Algorithm 1's own inputs besides the data, the players and the seed: rounds ``r`` and φ. Every No-Data
    parameter model (the algorithm's, the protocol's, an experiment's) takes them from here."""

    rounds: int = Field(3, ge=1, description="EV rounds r (paper, §8: 3)")
    phi: float = Field(
        0.6,
        ge=0.0,
        le=1.0,
        description="probability of flipping a failed label, Alg. 1 line 10 (the paper's φ: 0.6 for the decision "
        "tree and 0.9 for the LLM, Table 2's caption; 0.5 in the OOP run §9.2 discusses)",
    )


class NoDataParams(AlgorithmParams):
    """Inputs of Algorithm 1 besides the data and the players: rounds ``r``, flip probability φ, seed."""

    seed: int = Field(0, ge=0)


class RoundRecord(BaseModel):
    """One EV round: ``x'``, ``ỹ'``, the challenge drawn and the check outcome."""

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


class NoDataOutcome(Decision, Statistics):
    """A No-Data verdict's statistics as the report reads them (``NoDataProtocol.Outcome``): Algorithm 1's decision,
    the reference label y (None for an unlabelled datapoint) and the decision tree's own label (Table 2 "known")."""

    reference: Label | None = None
    known_label: Label | None = None


def coins(seed: int, index: int, run: int, player: Player) -> np.random.Generator:
    """The random stream of one player for datapoint ``index`` of binary run ``run`` (App. C.2; 0 if binary).

    Stream ``k`` is child ``k`` of ``SeedSequence(seed, spawn_key=(run, index))``: the evaluator (0), the
    verifier (1), the flip (2), and a rule generator proposing for an LLM evaluator (3).
    """
    import numpy as np

    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(run, index, _STREAM[player])))


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
