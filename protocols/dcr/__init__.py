"""DCR (Cui et al. 2024): divide-conquer evaluation, auto-metric conversion and reason-assisted improvement."""

from typing import TYPE_CHECKING

from voirdire.kit import lazy_face

if TYPE_CHECKING:
    from .amc import alpha_beta as alpha_beta, consistency_score as consistency_score, raw_score as raw_score
    from .api import acheck as acheck, check as check, check_benchmark as check_benchmark
    from .items import DCRItem as DCRItem
    from .protocol import DCR as DCR, DCRParams as DCRParams, Round as Round
    from .report import DCRReport as DCRReport, report as report

# Every name re-exported above (`X as X`) is exported, imported at its first use (voirdire.base.faces).
__getattr__, __dir__, __all__ = lazy_face(__name__)
