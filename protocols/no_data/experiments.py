"""§8 experiments as configurable runs: build the players from a config, run Algorithm 1, report metrics.

This is the pure core of ``voirdire nodata`` (issue item 7): the CLI/Session layer only has to turn flags
into an ``ExperimentConfig`` and forward ``on_event`` to the transcript. Reports carry accuracy, F1, success
and flip rates, the evaluator's "known" scores (Table 2's reference column) and the Lemma 1 / Theorem 1
bounds for the run.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from voirdire.metrics import accuracy, precision_recall_f1

from .algorithm import NoDataParams, NoDataRun, OnEvent, no_data_algorithm
from .challenges import RuleVerifier
from .data import FILES, Dataset, load_split, resolve_dataset
from .evaluators import ComposedEvaluator, DecisionTreeLabeller, FeatureEncoding, Labeller, NoisyLabeller
from .generators import (
    GENERATOR_NAMES,
    Generator,
    GeneratorName,
    LieFGenerator,
    LieSigmaMode,
    bit_majority,
    make_generator,
)
from .rubric import IP_RUBRIC, Label, SubsetMode
from .theory import TheoryReport, theory_report


class ExperimentConfig(BaseModel):
    """One decision-tree run of §8 (the LLM evaluator needs a model role, so the Session builds it)."""

    data: str = Field("ip", description="ip | oop | PATH to a [[x, y], ...] JSON file")
    rubric: str | None = Field(None, description="verifier rubric (ip | oop); required for a PATH")
    generator: GeneratorName = Field("oracle", description=" | ".join(GENERATOR_NAMES))
    p: float = Field(0.1, ge=0.0, le=1.0, description="lie-p: probability of a random x' (§8.1.1)")
    label_noise: float = Field(0.0, ge=0.0, le=1.0, description="Table 3: evaluator flips its label w.p.")
    rounds: int = Field(3, ge=1)
    phi: float = Field(0.6, ge=0.0, le=1.0, description="P(flip a failed label), paper's definition")
    seed: int = Field(0, ge=0)
    encoding: FeatureEncoding = "decimal"
    subsets: SubsetMode = "whole"
    epsilon: float | None = None
    lie_f_target: Literal["f", "bit-majority"] = Field(
        "f", description="lie-f: match f(x') (paper) or the notebook's majority of x''s bits"
    )
    lie_sigma_mode: LieSigmaMode = Field(
        "encoding", description="lie-sigma: output C(x) (paper) or a permutation of C(x) (the notebook)"
    )

    @model_validator(mode="after")
    def _rubric_for_a_path(self) -> ExperimentConfig:
        if self.data not in FILES and self.rubric is None:
            raise ValueError(f"data {self.data!r} is a file: give its verifier rubric (rubric='ip' or 'oop')")
        return self

    @property
    def params(self) -> NoDataParams:
        return NoDataParams(rounds=self.rounds, phi=self.phi, seed=self.seed)


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


def f1(gold: Sequence[Label], pred: Sequence[Label]) -> float:
    """Binary F1 of label 1, as the paper's tables (scikit-learn's ``f1_score`` default)."""
    return precision_recall_f1([g == 1 for g in gold], [p == 1 for p in pred]).f1


_DT_CACHE: dict[tuple[str, str, int], DecisionTreeLabeller] = {}


def decision_tree(
    encoding: FeatureEncoding = "decimal", random_state: int = 123, root: str | os.PathLike[str] | None = None
) -> DecisionTreeLabeller:
    """The §8.0.2 decision tree, trained once on the IP train split and cached."""
    train = load_split("ip", "train", root)
    key = (train.path, encoding, random_state)
    if key not in _DT_CACHE:
        _DT_CACHE[key] = DecisionTreeLabeller(train.xs, train.ys, encoding, random_state)
    return _DT_CACHE[key]


def build_generator(config: ExperimentConfig) -> Generator:
    """The evaluator generates with the rubric it knows, the IP rubric, on every data set (§8.0.2)."""
    if config.generator == "lie-f" and config.lie_f_target == "bit-majority":
        return LieFGenerator(IP_RUBRIC, label_of=bit_majority)
    return make_generator(
        config.generator, IP_RUBRIC, p=config.p, subsets=config.subsets, lie_sigma_mode=config.lie_sigma_mode
    )


def build_evaluator(config: ExperimentConfig, base: Labeller) -> ComposedEvaluator:
    labeller: Labeller = NoisyLabeller(base, config.label_noise) if config.label_noise > 0 else base
    return ComposedEvaluator(labeller, build_generator(config))


def score(run: NoDataRun, gold: Sequence[Label]) -> dict[str, float]:
    return {
        "accuracy": accuracy(gold, run.predictions),
        "f1": f1(gold, run.predictions),
        "success_rate": run.success_rate,
        "flip_rate": run.flip_rate,
        "revealed_accuracy": accuracy(gold, run.revealed),
    }


async def run_experiment(
    config: ExperimentConfig,
    *,
    dataset: Dataset | None = None,
    labeller: DecisionTreeLabeller | None = None,
    on_event: OnEvent | None = None,
    root: str | os.PathLike[str] | None = None,
) -> ExperimentReport:
    """Run Algorithm 1 with a decision-tree evaluator as configured and score it against the references."""
    data = dataset or resolve_dataset(config.data, config.rubric, root)
    dt = labeller or decision_tree(config.encoding, root=root)
    verifier = RuleVerifier(data.rubric, subsets=config.subsets, epsilon=config.epsilon)
    run = await no_data_algorithm(data.xs, build_evaluator(config, dt), verifier, config.params, on_event=on_event)
    known = dt.predict_many(data.xs)
    scores = score(run, data.ys)
    return ExperimentReport(
        config=config,
        data=data.name,
        n=len(data.rows),
        **scores,
        known_accuracy=accuracy(data.ys, known),
        known_f1=f1(data.ys, known),
        theory=theory_report(config.rounds, config.phi, alpha=scores["revealed_accuracy"]),
    )


class MeanSD(BaseModel):
    mean: float
    sd: float
    n: int

    def fmt(self, scale: float = 100.0, digits: int = 1) -> str:
        return f"{self.mean * scale:.{digits}f} ± {self.sd * scale:.{digits}f}"


def mean_sd(values: Sequence[float]) -> MeanSD:
    """Mean and sample standard deviation (ddof = 1; 0 for a single value)."""
    n = len(values)
    if n == 0:
        raise ValueError("no values")
    m = sum(values) / n
    sd = math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    return MeanSD(mean=m, sd=sd, n=n)


METRICS = ("accuracy", "f1", "success_rate", "flip_rate", "revealed_accuracy")


async def run_seeds(
    config: ExperimentConfig,
    seeds: int,
    *,
    dataset: Dataset | None = None,
    on_event: OnEvent | None = None,
    root: str | os.PathLike[str] | None = None,
) -> list[ExperimentReport]:
    """``--seed N --seeds K``: the same config for seeds N, N+1, ..., N+K-1."""
    data = dataset or resolve_dataset(config.data, config.rubric, root)
    configs = [config.model_copy(update={"seed": s}) for s in range(config.seed, config.seed + seeds)]
    return [await run_experiment(c, dataset=data, on_event=on_event, root=root) for c in configs]


def aggregate(reports: Sequence[ExperimentReport]) -> dict[str, MeanSD]:
    return {m: mean_sd([getattr(r, m) for r in reports]) for m in METRICS}
