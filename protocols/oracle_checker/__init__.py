"""The oracle–checker scheme (Zeng, Wang, Ibbetson 2024): an LLM oracle's answer is accepted only when a checker's
test passes: the linearity checker for entity extraction (§3, App. A) with the guarantee of Theorems 3.1–3.2, the
Yes-prover (§4.3, Algorithm 1) and the No-checker (§4.1, Fig. 4) for paraphrase decisions."""

from .api import acheck_entities, acheck_paraphrase, check_entities, check_paraphrase
from .entities import Entity, linearity_test, parse_entities
from .items import SentenceItem
from .linearity import LinearityChecker, LinearityParams
from .paraphrase import PairItem, ParaphraseChecker, ParaphraseParams
from .theorems import Guarantee, failure_bound, guarantees, rejection_bound

__all__ = [
    "Entity",
    "Guarantee",
    "LinearityChecker",
    "LinearityParams",
    "PairItem",
    "ParaphraseChecker",
    "ParaphraseParams",
    "SentenceItem",
    "acheck_entities",
    "acheck_paraphrase",
    "check_entities",
    "check_paraphrase",
    "failure_bound",
    "guarantees",
    "linearity_test",
    "parse_entities",
    "rejection_bound",
]
