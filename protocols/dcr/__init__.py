"""DCR (Cui et al. 2024): divide-conquer evaluation, auto-metric conversion and reason-assisted improvement."""

from .amc import alpha_beta, consistency_score, raw_score
from .items import DCRItem
from .protocol import DCR, DCRParams, Round

__all__ = ["DCR", "DCRItem", "DCRParams", "Round", "alpha_beta", "consistency_score", "raw_score"]
