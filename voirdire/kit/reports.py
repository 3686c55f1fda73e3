"""What a protocol's report computes: its ``Context``, the shared statistics (``precision_recall_f1``,
``accuracy``, ``auroc``, ``cohen_kappa``, ``mean_sd``, the rank correlations, ``counts``, ``category``), intervals
on them (``wilson``, ``proportion``, ``bootstrap_items`` and friends: an ``Interval``; ``DEFAULT_SEED``), sessions
left out (``LeftOut``) and the report file (``report_file``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from voirdire.base import lazy_face

if TYPE_CHECKING:
    from voirdire.certificate import (
        DEFAULT_SEED as DEFAULT_SEED,
        Interval as Interval,
        bootstrap_f1 as bootstrap_f1,
        bootstrap_items as bootstrap_items,
        bootstrap_means as bootstrap_means,
        bootstrap_sums as bootstrap_sums,
        proportion as proportion,
        wilson as wilson,
    )
    from voirdire.reports import (
        PRF as PRF,
        Context as Context,
        LeftOut as LeftOut,
        accuracy as accuracy,
        auroc as auroc,
        category as category,
        cohen_kappa as cohen_kappa,
        counts as counts,
        f1_of_pairs as f1_of_pairs,
        kendall_tau_b as kendall_tau_b,
        map_values as map_values,
        mean_sd as mean_sd,
        pearson as pearson,
        precision_recall_f1 as precision_recall_f1,
        report_file as report_file,
        round_up as round_up,
        slug as slug,
        spearman as spearman,
    )

__getattr__, __dir__, __all__ = lazy_face(__name__)
