"""§8 experiments as batch runs of ``NoDataProtocol``: the same sessions as ``voirdire nodata``, kept in memory.

``run_experiment`` runs one decision-tree configuration of Tables 2-3 for one seed and scores it (accuracy, F1,
success and flip rates, the evaluator's "known" scores of Table 2 and the Lemma 1 / Theorem 1 values);
``run_seeds`` repeats it over seeds. ``no_data_algorithm`` is Algorithm 1 over a list of datapoints with any
evaluator and verifier given in code, and ``no_data_k_ary`` the ``k - 1`` binary runs of App. C.2. Every one of
them runs ``NoDataProtocol.run`` through ``voirdire.runner.run_in_memory`` (events counted, not stored).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from pydantic import BaseModel, Field

from voirdire.kit import Verdict

from .algorithm import KAryRun, NoDataParams, NoDataRun
from .challenges import Verifier
from .data import Dataset, resolve_dataset
from .evaluators import BinarisedLabeller, ComposedEvaluator, Evaluator, Labeller, decision_tree
from .generators import Generator, rule_generator
from .protocol import NoDataItem, NoDataProtocol, NoDataProtocolParams, make_items
from .report import METRICS, MeanSD, decision_of, f1, mean_sd, score, seed_score
from .rubric import IP_RUBRIC, Label, decode_k_ary
from .theory import TheoryReport

__all__ = [
    "ExperimentConfig",
    "ExperimentReport",
    "MeanSD",
    "aggregate",
    "build_generator",
    "decision_tree",
    "f1",
    "mean_sd",
    "no_data_algorithm",
    "no_data_k_ary",
    "run_experiment",
    "run_seeds",
    "score",
]


class ExperimentConfig(NoDataProtocolParams):
    """One decision-tree run of §8 (Tables 2-3): the protocol's parameters, and the seed."""

    seed: int = Field(0, ge=0)

    def protocol_params(self, rubric: str | None = None) -> NoDataProtocolParams:
        """The protocol's parameters of this run (``rubric`` overrides the verifier's rubric)."""
        fields = self.model_dump(exclude={"seed", "rubric"})
        return NoDataProtocolParams.model_validate({**fields, "rubric": rubric or self.rubric})


class ExperimentReport(BaseModel):
    config: ExperimentConfig
    data: str
    n: int
    accuracy: float
    f1: float
    success_rate: float
    flip_rate: float
    revealed_accuracy: float = Field(description="accuracy of the revealed labels, before any flip")
    known_accuracy: float = Field(description="the evaluator's plain accuracy on the data (Table 2 'known')")
    known_f1: float
    theory: TheoryReport


def build_generator(config: ExperimentConfig) -> Generator:
    """The evaluator generates with the rubric it knows, the IP rubric, on every data set (§8.0.2)."""
    return rule_generator(
        config.generator,
        IP_RUBRIC,
        p=config.p,
        subsets=config.subsets,
        lie_sigma_mode=config.lie_sigma_mode,
        lie_f_target=config.lie_f_target,
    )


async def run_sessions(protocol: NoDataProtocol, items: Sequence[NoDataItem]) -> list[Verdict]:
    """One ``NoDataProtocol`` session per item, in memory (events counted, not kept)."""
    from voirdire.kit.runs import run_in_memory  # the runner: imported by an experiment, not by the registration

    verdicts, _ = await run_in_memory(protocol, items, keep=False)
    return verdicts


async def run_experiment(
    config: ExperimentConfig, *, dataset: Dataset | None = None, root: str | os.PathLike[str] | None = None
) -> ExperimentReport:
    """Run Algorithm 1 with the decision-tree evaluator as configured and score it against the references."""
    data = dataset or resolve_dataset(config.data, config.rubric, root)
    protocol = NoDataProtocol(config.protocol_params(rubric=data.rubric_name), root=root)
    verdicts = await run_sessions(protocol, make_items(data, [config.seed]))
    s = seed_score(config.seed, verdicts, rounds=config.rounds, phi=config.phi)
    if s.known_accuracy is None or s.known_f1 is None:
        raise RuntimeError("a decision-tree run records the tree's own labels")
    return ExperimentReport(
        config=config,
        data=data.name,
        n=len(data.rows),
        accuracy=s.accuracy,
        f1=s.f1,
        success_rate=s.success_rate,
        flip_rate=s.flip_rate,
        revealed_accuracy=s.revealed_accuracy,
        known_accuracy=s.known_accuracy,
        known_f1=s.known_f1,
        theory=s.theory,
    )


async def run_seeds(
    config: ExperimentConfig,
    seeds: int,
    *,
    dataset: Dataset | None = None,
    root: str | os.PathLike[str] | None = None,
) -> list[ExperimentReport]:
    """``--seed N --seeds K``: the same config for seeds N, N+1, ..., N+K-1."""
    data = dataset or resolve_dataset(config.data, config.rubric, root)
    configs = [config.model_copy(update={"seed": s}) for s in range(config.seed, config.seed + seeds)]
    return [await run_experiment(c, dataset=data, root=root) for c in configs]


def aggregate(reports: Sequence[ExperimentReport]) -> dict[str, MeanSD]:
    return {m: mean_sd([getattr(r, m) for r in reports]) for m in METRICS}


async def no_data_algorithm(
    xs: Sequence[str], evaluator: Evaluator, verifier: Verifier, params: NoDataParams, *, run: int = 0
) -> NoDataRun:
    """Algorithm 1 over ``xs`` with an evaluator and a verifier given in code: one session per datapoint."""
    protocol = NoDataProtocol(
        NoDataProtocolParams(rounds=params.rounds, phi=params.phi), evaluator=evaluator, verifier=verifier
    )
    items = [NoDataItem(index=i, x=x, seed=params.seed, run=run) for i, x in enumerate(xs)]
    return NoDataRun(decisions=[decision_of(v) for v in await run_sessions(protocol, items)])


async def no_data_k_ary(
    xs: Sequence[str],
    labeller: Labeller,
    generator_for: Callable[[Label], Generator],
    verifier: Verifier,
    label_set: Sequence[Label],
    params: NoDataParams,
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
        runs.append(await no_data_algorithm(xs, evaluator, verifier, params, run=j))
    labels = [decode_k_ary([run.decisions[i].label for run in runs], label_set) for i in range(len(xs))]
    return KAryRun(label_set=list(label_set), runs=runs, labels=labels)
