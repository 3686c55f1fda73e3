"""The oracle–checker scheme (Zeng, Wang, Ibbetson 2024): an LLM oracle's answer is accepted only when a checker's
test passes: the linearity checker for entity extraction (§3, App. A) with the guarantee of Theorems 3.1–3.2, the
Yes-prover (§4.3, Algorithm 1) and the No-checker (§4.1, Fig. 4) for paraphrase decisions."""

from typing import TYPE_CHECKING

from voirdire.kit import lazy_face

if TYPE_CHECKING:
    from .api import acheck_entities, acheck_paraphrase, check_entities, check_paraphrase
    from .entities import Entity, linearity_test, parse_entities
    from .items import SentenceItem
    from .linearity import LinearityChecker, LinearityParams
    from .paraphrase import PairItem, ParaphraseChecker, ParaphraseParams
    from .theorems import Guarantee, failure_bound, guarantees, rejection_bound

# What runs: each name's module is imported at the name's first use (voirdire.base.faces).
__getattr__ = lazy_face(
    __name__,
    {
        "voirdire.protocols.oracle_checker.api": (
            "acheck_entities", "acheck_paraphrase", "check_entities", "check_paraphrase",
        ),
        "voirdire.protocols.oracle_checker.entities": ("Entity", "linearity_test", "parse_entities"),
        "voirdire.protocols.oracle_checker.items": ("SentenceItem",),
        "voirdire.protocols.oracle_checker.linearity": ("LinearityChecker", "LinearityParams"),
        "voirdire.protocols.oracle_checker.paraphrase": ("PairItem", "ParaphraseChecker", "ParaphraseParams"),
        "voirdire.protocols.oracle_checker.theorems": ("Guarantee", "failure_bound", "guarantees", "rejection_bound"),
    },
)

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
