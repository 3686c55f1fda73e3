"""Prediction-powered inference: a run's headline share debiased by a few human labels.

Angelopoulos, Bates, Fannjiang, Jordan and Zrnic, "Prediction-powered inference", Science 382 (2023), with the
power tuning of Angelopoulos, Duchi and Zrnic, "PPI++" (arXiv:2311.01453), as the ``ppi-python`` package computes
them (``ppi_py.ppi_mean_pointestimate`` / ``ppi_mean_ci``). The quantity is a mean over the run's items of a human
label Y (1 = people accept: the claim is true, the answer correct); the protocol's verdict Ŷ predicts it on every
item. With n labelled items and N unlabelled ones, the estimate is the verdicts' mean over the unlabelled items
corrected by the verdicts' mean error on the labelled ones (the "rectifier"); its interval is valid whatever the
verdicts' errors, provided the labelled items are a uniform random sample of the run, drawn independently of the
verdicts (``voirdire calibrate --sample``).

Beside it: the classical interval from the n labels alone (``ppi_py.classical_mean_ci``'s normal approximation,
computed with scipy: ``_normal_interval``; the widths compare like for like) and the naïve verdict-only share over
all items, which has no interval worth printing: its error is the verdicts' bias, which no number of unlabelled
items shrinks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from voirdire.certificate.intervals import DEFAULT_LEVEL, OFF, Interval, no_interval


class PPIEstimate(BaseModel):
    labelled: int
    unlabelled: int
    naive: float | None  # the verdicts' mean over every item
    classical: Interval  # from the labels alone
    ppi: Interval  # prediction-powered

    def text(self, quantity: str = "share accepted by people", *, labelled: str = "labelled") -> str:
        naive = "undefined (no items)" if self.naive is None else f"{100 * self.naive:.1f}%"
        if self.unlabelled == 0:  # a census: nothing to predict, the labels are the answer
            return "\n".join([
                f"{quantity}, every one of the {self.labelled} items {labelled}:",
                f"  from the labels:            {self.classical.text(percent=True)}",
                f"  naïve (verdicts only):      {naive}",
            ])  # fmt: skip
        return "\n".join([
            f"{quantity}, from {self.labelled} human labels and {self.unlabelled} unlabelled verdicts:",
            f"  prediction-powered (PPI++): {self.ppi.text(percent=True)}",
            f"  classical (labels only):    {self.classical.text(percent=True)}",
            f"  naïve (verdicts only):      {naive} (no interval: its error is the verdicts' bias)",
        ])  # fmt: skip


def ppi_mean(
    labels: Sequence[float],
    predictions: Sequence[float],
    unlabelled_predictions: Sequence[float],
    *,
    level: float = DEFAULT_LEVEL,
    bounds: tuple[float, float] | None = None,
) -> PPIEstimate:
    """The prediction-powered estimate of the mean label, beside the classical and the naïve ones.

    ``labels[i]`` and ``predictions[i]`` belong to the same labelled item; ``unlabelled_predictions`` are the
    verdicts on the items nobody labelled (the labelled items' verdicts are not repeated there). ``bounds``: the
    range the mean cannot leave ((0, 1) for a share); a normal interval reaching past it is cut there, which keeps
    its coverage.
    """
    import numpy as np

    if len(labels) != len(predictions):
        raise ValueError(f"length mismatch: {len(labels)} labels vs {len(predictions)} predictions")
    if not (level == 0 or 0 < level < 1):
        raise ValueError(f"confidence level must be between 0 and 1 (exclusive), or 0 for none; got {level}")
    y = np.asarray(labels, dtype=float)
    yhat = np.asarray(predictions, dtype=float)
    unl = np.asarray(unlabelled_predictions, dtype=float)
    n, big_n = len(y), len(unl)
    everything = np.concatenate([yhat, unl])
    naive = float(everything.mean()) if len(everything) else None
    return PPIEstimate(
        labelled=n,
        unlabelled=big_n,
        naive=naive,
        classical=_clip(_classical(y, level), bounds),
        ppi=_clip(_ppi(y, yhat, unl, level), bounds),
    )


def _classical(y: object, level: float) -> Interval:
    import numpy as np

    y = np.asarray(y, dtype=float)
    method = "normal"
    n = len(y)
    if n < 2:
        return no_interval("classical", float(y.mean()) if n else None, n=n, method=method, level=level,
                           reason="fewer than 2 labelled items")  # fmt: skip
    if float(np.ptp(y)) == 0.0:
        return no_interval("classical", float(y.mean()), n=n, method=method, level=level,
                           reason="every label is the same, so the normal interval has width 0")  # fmt: skip
    if level == 0:
        return no_interval("classical", float(y.mean()), n=n, method=method, level=level, reason=OFF)
    low, high = _normal_interval(y, 1 - level)
    return Interval(name="classical", estimate=float(y.mean()), low=float(low), high=float(high), level=level,
                    method=method, n=n)  # fmt: skip


def _normal_interval(y: Any, alpha: float) -> tuple[float, float]:
    """``ppi_py.classical_mean_ci(y, alpha=alpha)``: the mean ± the normal quantile times the standard error
    (the population standard deviation over √n), with scipy's normal quantile, operation for operation as
    ``ppi_py`` computes it (the same figures to the last digit: tests/certificate/test_statistics.py). Computed
    here because importing ``ppi_py`` brings numba and statsmodels (about 68 MB of memory and 0.35 s of CPU): a
    census of labels, the usual certificate, needs no prediction-powered estimate, so it never loads them."""
    import numpy as np
    from scipy.stats import norm

    mean, std_mean = y.mean(), y.std() / np.sqrt(y.shape[0])
    z = norm.ppf(1 - alpha / 2.0)
    return float(mean - z * std_mean), float(mean + z * std_mean)


def _ppi(y: object, yhat: object, unl: object, level: float) -> Interval:
    import numpy as np

    y, yhat, unl = (np.asarray(x, dtype=float) for x in (y, yhat, unl))
    method = "PPI++ (power-tuned)"
    n = len(y)
    if n < 2:
        return no_interval("PPI", None, n=n, method=method, level=level, reason="fewer than 2 labelled items")
    if len(unl) < 2:
        why = "fewer than 2 unlabelled items (every item is labelled: see the classical interval)"
        return no_interval("PPI", None, n=n, method=method, level=level, reason=why)
    if float(np.ptp(y - yhat)) == 0.0 and float(np.ptp(unl)) == 0.0:
        return no_interval("PPI", None, n=n, method=method, level=level,
                           reason="labels and verdicts constant throughout: no variance to estimate")  # fmt: skip
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

    estimate = float(np.asarray(ppi_mean_pointestimate(y, yhat, unl)).reshape(-1)[0])
    if level == 0:
        return no_interval("PPI", estimate, n=n, method=method, level=level, reason=OFF)
    low, high = (float(np.asarray(x).reshape(-1)[0]) for x in ppi_mean_ci(y, yhat, unl, alpha=1 - level))
    return Interval(name="PPI", estimate=estimate, low=low, high=high, level=level, method=method, n=n)


def _clip(interval: Interval, bounds: tuple[float, float] | None) -> Interval:
    if bounds is None or interval.low is None or interval.high is None:
        return interval
    low, high = max(interval.low, bounds[0]), min(interval.high, bounds[1])
    if (low, high) == (interval.low, interval.high):
        return interval
    return interval.model_copy(update={"low": low, "high": high, "method": f"{interval.method}, cut to {list(bounds)}"})
