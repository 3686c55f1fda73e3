"""Verdicts against people, and people against each other, on accept/reject.

A verdict and a human label are compared as accepted (the claim holds, the answer is correct, …) or rejected. The
positive class is *accepted*: TPR is the share of the items people accept that the verdict accepts, TNR the share
of the items people reject that the verdict rejects. Cohen's κ is voirdire's one κ (``voirdire.reports``,
scikit-learn's); Krippendorff's α is the ``krippendorff`` package's, nominal. Every figure carries an interval
(``voirdire.certificate.intervals``): Wilson for a proportion over items with one session each, else a bootstrap
over items.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from voirdire.certificate.intervals import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Interval,
    bootstrap_counts,
    bootstrap_items,
    bootstrap_means,
    bootstrap_sums,
    no_interval,
    wilson,
)

Pair = tuple[bool, bool]  # (verdict accepted, human label accepted) of one session


class Confusion(BaseModel):
    """Sessions by verdict and human label; positive = accepted."""

    tp: int  # both accept
    fp: int  # the verdict accepts, people reject
    fn: int  # the verdict rejects, people accept
    tn: int  # both reject

    def text(self, who: str = "people") -> str:
        """The matrix, its columns named for the source (``people``, ``gold``)."""
        return "\n".join([
            f"{'':>18}{who + ' accept':>15}{who + ' reject':>15}",
            f"{'verdict accepts':>18}{self.tp:>15}{self.fp:>15}",
            f"{'verdict rejects':>18}{self.fn:>15}{self.tn:>15}",
        ])  # fmt: skip


class VerdictAgreement(BaseModel):
    items: int
    sessions: int
    confusion: Confusion
    accuracy: Interval
    tpr: Interval
    tnr: Interval
    kappa: Interval
    alpha: Interval


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """voirdire's Cohen's κ (``voirdire.reports``); ``nan`` where it is undefined."""
    from voirdire.reports import cohen_kappa as kappa

    return kappa(a, b)


def krippendorff_alpha(rows: Sequence[Sequence[float]]) -> float:
    """Nominal Krippendorff's α of raters (rows) over units (columns), ``nan`` marking a missing label; ``nan``
    where it is undefined (fewer than two values in the data, no unit with two labels)."""
    import krippendorff
    import numpy as np

    data = np.asarray(rows, dtype=float)
    values = set(data[np.isfinite(data)].tolist())
    paired = int(np.count_nonzero(np.sum(np.isfinite(data), axis=0) >= 2))
    if len(values) < 2 or paired == 0:
        return math.nan
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))


def proportion(
    name: str, groups: Sequence[Sequence[bool]], *, level: float = DEFAULT_LEVEL, seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> Interval:
    """The share of true observations: a Wilson interval when each item has one observation, else a bootstrap
    over items (the sessions of one item are not independent)."""
    groups = [g for g in groups if g]
    if all(len(g) == 1 for g in groups):
        return wilson(name, sum(bool(g[0]) for g in groups), len(groups), level=level)
    # Each resample's share, every resample at once (bootstrap_means): the interval bootstrap_items gives.
    return bootstrap_means(name, [[float(x) for x in g] for g in groups], level=level, seed=seed, resamples=resamples)


def verdict_agreement(
    groups: Sequence[Sequence[Pair]], *, level: float = DEFAULT_LEVEL, seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> VerdictAgreement:
    """Verdicts against human labels; ``groups``: one list of (verdict, label) pairs per item (its sessions)."""
    return agreement_of_counts((pair_counts(g) for g in groups if g), level=level, seed=seed, resamples=resamples)


def agreement_of_counts(
    counts: Iterable[Sequence[int]], *, level: float = DEFAULT_LEVEL, seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> VerdictAgreement:
    """``verdict_agreement`` given each item's (tp, fp, fn, tn) over its sessions (``pair_counts``; a generator
    is read into an array, row by row): every figure depends on the pairs through these counts alone, so a run of
    any length is held as four numbers an item. A proportion is Wilson's where every item has one session, else
    the bootstrap of its items' sums over their counts, the interval ``proportion`` gives on the pairs themselves."""
    import numpy as np

    boot: dict[str, Any] = {"level": level, "seed": seed, "resamples": resamples}
    rows = np.fromiter(itertools.chain.from_iterable(counts), dtype=np.int64).reshape(-1, 4)
    tp, fp, fn, tn = (rows[:, k] for k in range(4))
    # κ and α of a resample depend on its confusion matrix alone: every resample is computed at once from the summed
    # counts (``kappa_of_counts``, ``alpha_of_counts``: the closed forms of scikit-learn's κ and the krippendorff
    # package's nominal α on two raters, which tests/certificate/test_statistics.py checks against both libraries).
    return VerdictAgreement(
        items=len(rows),
        sessions=int(rows.sum()),
        confusion=Confusion(tp=int(tp.sum()), fp=int(fp.sum()), fn=int(fn.sum()), tn=int(tn.sum())),
        accuracy=_share("accuracy", tp + tn, rows.sum(axis=1), "", **boot),
        tpr=_share("TPR", tp, tp + fn, "no item that people accept", **boot),
        tnr=_share("TNR", tn, fp + tn, "no item that people reject", **boot),
        kappa=bootstrap_counts("Cohen's κ", rows, kappa_of_counts, **boot),
        alpha=bootstrap_counts("Krippendorff's α", rows, alpha_of_counts, **boot),
    )


def _share(name: str, hits: Any, sizes: Any, empty: str, *, level: float, seed: int, resamples: int) -> Interval:
    """``proportion`` of the items with an observation, given each item's true observations and observations."""
    having = sizes > 0
    hits, sizes = hits[having], sizes[having]
    if not len(sizes) and empty:
        return no_interval(name, None, n=0, method="Wilson", reason=empty, level=level)
    if (sizes == 1).all():
        return wilson(name, int(hits.sum()), len(sizes), level=level)
    return bootstrap_sums(name, hits, sizes, level=level, seed=seed, resamples=resamples)


def pair_counts(pairs: Iterable[Pair]) -> tuple[int, int, int, int]:
    """(tp, fp, fn, tn) of (verdict, label) pairs: one item's row of ``agreement_of_counts``."""
    tp = fp = fn = tn = 0
    for v, h in pairs:
        tp, fp, fn, tn = tp + (v and h), fp + (v and not h), fn + (not v and h), tn + (not v and not h)
    return tp, fp, fn, tn


def kappa_of_counts(counts: Any) -> Any:
    """Cohen's κ of verdicts against labels from (tp, fp, fn, tn) along the last axis; ``nan`` where one cell holds
    every session: κ is 0/0 there, or 1 by scikit-learn's convention, which would certify agreement that the data
    cannot show; the interval says why instead."""
    import numpy as np

    c = np.asarray(counts, dtype=float)
    tp, fp, fn, tn = (c[..., i] for i in range(4))
    n = tp + fp + fn + tn
    with np.errstate(divide="ignore", invalid="ignore"):
        observed = (tp + tn) / n
        chance = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / (n * n)
        kappa = (observed - chance) / (1 - chance)
    return np.where(np.count_nonzero(c, axis=-1) > 1, kappa, np.nan)


def alpha_of_counts(counts: Any) -> Any:
    """Krippendorff's nominal α of two raters (verdict, label) on every session from (tp, fp, fn, tn) along the
    last axis: 1 − (n − 1)·o₀₁ / (n₀·n₁) over the n = 2N pairable values, o₀₁ the disagreeing sessions; ``nan``
    where only one value occurs (as ``krippendorff_alpha``)."""
    import numpy as np

    c = np.asarray(counts, dtype=float)
    tp, fp, fn, tn = (c[..., i] for i in range(4))
    values = 2 * (tp + fp + fn + tn)
    accepts, rejects = 2 * tp + fp + fn, 2 * tn + fp + fn
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = 1 - (values - 1) * (fp + fn) / (accepts * rejects)
    return np.where((accepts > 0) & (rejects > 0), alpha, np.nan)


class HumanAgreement(BaseModel):
    """People against each other: α over every annotator, κ for each pair of annotators."""

    annotators: list[str]
    items: int  # items with two or more labels
    alpha: Interval
    kappas: list[tuple[str, str, Interval]]


def human_agreement(
    labels: Mapping[str, Mapping[str, bool]], *, level: float = DEFAULT_LEVEL, seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> HumanAgreement | None:
    """Agreement between annotators; ``labels``: item id → annotator → accepted. None with fewer than two
    annotators."""
    boot: dict[str, Any] = {"level": level, "seed": seed, "resamples": resamples}
    annotators = sorted({a for by in labels.values() for a in by})
    if len(annotators) < 2:
        return None
    shared = [by for by in labels.values() if len(by) >= 2]
    rows = [[by.get(a) for a in annotators] for by in shared]

    def alpha(units: list[list[bool | None]]) -> float:
        return krippendorff_alpha(
            [[math.nan if u[i] is None else float(u[i]) for u in units] for i in range(len(annotators))]  # type: ignore[arg-type]
        )

    kappas = []
    for a, b in itertools.combinations(annotators, 2):
        both = [[(by[a], by[b])] for by in shared if a in by and b in by]

        def kappa(pairs: list[tuple[bool, bool]]) -> float:
            return cohen_kappa([x for x, _ in pairs], [y for _, y in pairs]) if len({*pairs}) > 1 else math.nan

        kappas.append((a, b, bootstrap_items(f"Cohen's κ {a}–{b}", both, kappa, **boot)))
    return HumanAgreement(
        annotators=annotators,
        items=len(shared),
        alpha=bootstrap_items("Krippendorff's α (people)", [[r] for r in rows], alpha, **boot),
        kappas=kappas,
    )
