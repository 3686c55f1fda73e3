"""DCR (Cui et al. 2024): divide-conquer evaluation, auto-metric conversion and reason-assisted improvement."""

from typing import TYPE_CHECKING

from voirdire.kit import lazy_face

if TYPE_CHECKING:
    from .amc import alpha_beta, consistency_score, raw_score
    from .api import acheck, check, check_benchmark
    from .items import DCRItem
    from .protocol import DCR, DCRParams, Round
    from .report import DCRReport, report

# What runs: each name's module is imported at the name's first use (voirdire.base.faces).
__getattr__ = lazy_face(
    __name__,
    {
        "voirdire.protocols.dcr.amc": ("alpha_beta", "consistency_score", "raw_score"),
        "voirdire.protocols.dcr.api": ("acheck", "check", "check_benchmark"),
        "voirdire.protocols.dcr.items": ("DCRItem",),
        "voirdire.protocols.dcr.protocol": ("DCR", "DCRParams", "Round"),
        "voirdire.protocols.dcr.report": ("DCRReport", "report"),
    },
)

__all__ = [
    "DCR",
    "DCRItem",
    "DCRParams",
    "DCRReport",
    "Round",
    "acheck",
    "alpha_beta",
    "check",
    "check_benchmark",
    "consistency_score",
    "raw_score",
    "report",
]
