"""The oracle–checker scheme (Zeng, Wang, Ibbetson 2024): an LLM oracle's answer is accepted only when a checker's
test passes. Built so far: the linearity checker for entity extraction (§3, App. A) and the guarantee of an
acceptance by Theorems 3.1–3.2."""

from .entities import Entity, linearity_test, parse_entities
from .items import SentenceItem
from .linearity import LinearityChecker, LinearityParams
from .theorems import Guarantee, failure_bound, guarantees, rejection_bound

__all__ = [
    "Entity",
    "Guarantee",
    "LinearityChecker",
    "LinearityParams",
    "SentenceItem",
    "failure_bound",
    "guarantees",
    "linearity_test",
    "parse_entities",
    "rejection_bound",
]
