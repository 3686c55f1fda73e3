"""The random sample of a run's items that people label (``voirdire calibrate --sample N --seed S``).

Prediction-powered inference and the classical interval both assume the labelled items are a uniform random
sample of the run, drawn independently of the verdicts. voirdire draws it itself, from the run's item ids alone
(sorted, so the draw does not depend on the order sessions finished in) with numpy's PCG64 generator seeded by
``S``, and can therefore check later that a labels file's items are that sample.
"""

from __future__ import annotations

from collections.abc import Iterable


def draw_sample(item_ids: Iterable[str], size: int, seed: int) -> list[str]:
    """``size`` distinct item ids drawn uniformly without replacement, in random order (the order to label them
    in); every id when ``size`` is at least their number."""
    import numpy as np

    if size < 1:
        raise ValueError(f"sample size must be at least 1, got {size}")
    ids = sorted(set(item_ids))
    order = np.random.default_rng(seed).permutation(len(ids))
    return [ids[int(i)] for i in order[: min(size, len(ids))]]
