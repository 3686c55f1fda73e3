"""Evaluators E of §6: a labeller ``E: X -> Y`` plus a generator of similar points (§6.1.1, §8.0.2).

Each EV round the evaluator labels ``x`` (``ŷ``) and then commits to ``<x', ỹ'>``; the authors' notebook
re-labels ``x`` every round, which matters for the noisy evaluator of Table 3 ("the evaluator itself also
outputs the incorrect label with probability p = 1/10"), so ``label`` takes the round number and an RNG.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from .data import data_dir, load_split
from .generators import Generator, Proposal
from .rubric import Label, Rubric

if TYPE_CHECKING:  # numpy is imported where features are built, not by the registration (`voirdire --help`)
    import numpy as np

FeatureEncoding = Literal["decimal", "bits"]


@runtime_checkable
class Labeller(Protocol):
    """``E: X -> Y``: the evaluator's labelling function (§5)."""

    async def label(self, x: str, round: int, rng: np.random.Generator) -> Label: ...


@runtime_checkable
class Evaluator(Protocol):
    """The evaluator player of the EV protocol (§6.1): labels ``x`` and proposes ``<x', ỹ'>`` each round."""

    async def label(self, x: str, round: int, rng: np.random.Generator) -> Label: ...

    async def propose(self, x: str, y_hat: Label, round: int, rng: np.random.Generator) -> Proposal: ...


@dataclass
class ComposedEvaluator:
    """An evaluator made of a labeller and a generator (the notebook's ``evaluator`` + ``generator`` pair)."""

    labeller: Labeller
    generator: Generator

    async def label(self, x: str, round: int, rng: np.random.Generator) -> Label:
        return await self.labeller.label(x, round, rng)

    async def propose(self, x: str, y_hat: Label, round: int, rng: np.random.Generator) -> Proposal:
        return await self.generator.propose(x, y_hat, round, rng)


def features(xs: Sequence[str], encoding: FeatureEncoding = "decimal") -> np.ndarray:
    """Decision-tree features for bit strings.

    ``"decimal"`` reproduces the paper's DT (§8.0.2, App. D.1 "sklearn with the default parameters"): the
    authors' notebook passed each bit string as a *single* string feature, which scikit-learn casts to
    ``float32`` — the string read as a **decimal** number, rounded to float32's 24-bit mantissa. That is why
    the DT reaches only 62.2% on IP (Table 2). ``"bits"`` is the natural one-feature-per-bit encoding.
    """
    import numpy as np

    if encoding == "decimal":
        return np.asarray([float(x) for x in xs], dtype=np.float64).astype(np.float32).reshape(-1, 1)
    if encoding == "bits":
        if len({len(x) for x in xs}) > 1:
            raise ValueError("the 'bits' encoding needs equal-length strings")
        return np.asarray([[int(ch) for ch in x] for x in xs], dtype=np.float32)
    raise ValueError(f"unknown feature encoding {encoding!r}; expected 'decimal' or 'bits'")


@dataclass
class DecisionTreeLabeller:
    """§8.0.2: a scikit-learn decision tree trained on the IP train split; deterministic given
    ``random_state`` (123, the notebook's value). Predictions are cached per string."""

    train_x: Sequence[str]
    train_y: Sequence[Label]
    encoding: FeatureEncoding = "decimal"
    random_state: int = 123
    _cache: dict[str, Label] = field(init=False, repr=False, default_factory=dict)

    def __post_init__(self) -> None:
        import numpy as np
        from sklearn.tree import DecisionTreeClassifier  # heavy import, only when a DT is built

        if len(self.train_x) != len(self.train_y) or not self.train_x:
            raise ValueError("train_x and train_y must be non-empty and of equal length")
        self.model = DecisionTreeClassifier(random_state=self.random_state)
        self.model.fit(features(self.train_x, self.encoding), np.asarray(self.train_y, dtype=int))

    def predict_many(self, xs: Sequence[str]) -> list[Label]:
        missing = [x for x in dict.fromkeys(xs) if x not in self._cache]
        if missing:
            for x, y in zip(missing, self.model.predict(features(missing, self.encoding)), strict=True):
                self._cache[x] = int(y)
        return [self._cache[x] for x in xs]

    def predict(self, x: str) -> Label:
        return self.predict_many([x])[0]

    async def label(self, x: str, round: int, rng: np.random.Generator) -> Label:
        return self.predict(x)


_DT_CACHE: dict[tuple[str, str, int], DecisionTreeLabeller] = {}


def decision_tree(
    encoding: FeatureEncoding = "decimal", random_state: int = 123, root: str | os.PathLike[str] | None = None
) -> DecisionTreeLabeller:
    """The §8.0.2 decision tree, trained once per process on the IP train split (per data folder)."""
    key = (str(data_dir(root)), encoding, random_state)
    if key not in _DT_CACHE:
        train = load_split("ip", "train", root)
        _DT_CACHE[key] = DecisionTreeLabeller(train.xs, train.ys, encoding, random_state)
    return _DT_CACHE[key]


@dataclass
class NoisyLabeller:
    """Table 3's lying evaluator: the base label, flipped with probability ``p`` on every call."""

    base: Labeller
    p: float = 0.1

    def __post_init__(self) -> None:
        if not 0.0 <= self.p <= 1.0:
            raise ValueError(f"p must be a probability, got {self.p}")

    async def label(self, x: str, round: int, rng: np.random.Generator) -> Label:
        y = await self.base.label(x, round, rng)
        return 1 - y if rng.random() < self.p else y


@dataclass
class RubricLabeller:
    """An evaluator that knows ``f = σ C`` exactly (the honest case of Lemma 3: "knowing f")."""

    rubric: Rubric

    async def label(self, x: str, round: int, rng: np.random.Generator) -> Label:
        return self.rubric.label(x)


@dataclass
class ScriptedLabeller:
    """Labels from a table or a function (tests and scripted dialogues)."""

    labels: Mapping[str, Label] | Callable[[str], Label]

    async def label(self, x: str, round: int, rng: np.random.Generator) -> Label:
        if callable(self.labels):
            return int(self.labels(x))
        return int(self.labels[x])


@dataclass
class BinarisedLabeller:
    """App. C.2: the binary view of a k-ary labeller for the run whose singleton class is ``positive``."""

    base: Labeller
    positive: Label

    async def label(self, x: str, round: int, rng: np.random.Generator) -> Label:
        return 0 if await self.base.label(x, round, rng) == self.positive else 1
