"""DCR (Cui et al. 2024): divide-conquer evaluation, auto-metric conversion and reason-assisted improvement."""

from .amc import alpha_beta, consistency_score, raw_score
from .api import acheck, check, check_benchmark
from .items import DCRItem
from .protocol import DCR, DCRParams, Round
from .report import DCRReport, report

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
