"""Entailment-based Open-QA grading with partial marks (Yao & Barbosa, "Accurate and Nuanced Open-QA Evaluation
Through Textual Entailment"), plus the model-free baselines it is compared with.

Modules: ``data`` (EVOUNA and generic JSONL), ``lexical`` and ``token_f1`` (model-free graders), ``parsing``
(strict reply parsers), ``hierarchy`` (answer sets and decision variants), ``partial_marks`` (App. D schemes),
``entailment`` (the entailment test's outcome and backend interface), ``nli`` (the cross-encoder backend; imports
torch, so it is not imported here), ``graded`` (what grading one answer produced), ``protocol`` (the grader: QA2D
-> entailment both ways -> hierarchy -> partial marks), ``baselines`` (lexical match and token F1 as protocols),
``scoring`` (scores against human judgments), ``report`` (the report of a transcript), ``reliability`` (agreement
across seeds), ``cli`` and ``plugin`` (the command line and the registrations). See docs/qa_entailment.md.
"""

from typing import TYPE_CHECKING

from voirdire.kit import lazy_face

if TYPE_CHECKING:
    from .baselines import LexicalMatchGrading, LexicalMatchParams, TokenF1Grading, TokenF1Params
    from .data import EVOUNA_SYSTEM_NAMES, EVOUNA_SYSTEMS, DatasetError, QAItem, load_dataset, load_evouna, load_jsonl
    from .entailment import EntailmentBackend, EntailmentOutcome
    from .graded import GradedItem
    from .hierarchy import DecisionVariant, HierarchyCell, Membership, hierarchy_counts, judged_correct, membership
    from .lexical import exact_match, lexical_match, normalize_answer
    from .parsing import (
        CLOSENESS_SCALE,
        DIFFICULTY_SCALE,
        EntailmentLabel,
        ParseFailure,
        parse_entailment,
        parse_score,
        parse_statement,
    )
    from .partial_marks import InferenceExplanation, parse_explanation
    from .protocol import QAEntailmentGrading, QAEntailmentParams, Roles
    from .report import QAReport, report, score
    from .scoring import SystemReport, f1_judgments, lexical_judgments, partial_mark_aurocs, system_reports
    from .token_f1 import f1_judgment, max_token_f1, token_f1

# What runs: each name's module is imported at the name's first use (voirdire.base.faces).
__getattr__ = lazy_face(
    __name__,
    {
        "voirdire.protocols.qa_entailment.baselines": (
            "LexicalMatchGrading", "LexicalMatchParams", "TokenF1Grading", "TokenF1Params",
        ),
        "voirdire.protocols.qa_entailment.data": (
            "EVOUNA_SYSTEM_NAMES", "EVOUNA_SYSTEMS", "DatasetError", "QAItem", "load_dataset", "load_evouna",
            "load_jsonl",
        ),
        "voirdire.protocols.qa_entailment.entailment": ("EntailmentBackend", "EntailmentOutcome"),
        "voirdire.protocols.qa_entailment.graded": ("GradedItem",),
        "voirdire.protocols.qa_entailment.hierarchy": (
            "DecisionVariant", "HierarchyCell", "Membership", "hierarchy_counts", "judged_correct", "membership",
        ),
        "voirdire.protocols.qa_entailment.lexical": ("exact_match", "lexical_match", "normalize_answer"),
        "voirdire.protocols.qa_entailment.parsing": (
            "CLOSENESS_SCALE", "DIFFICULTY_SCALE", "EntailmentLabel", "ParseFailure", "parse_entailment", "parse_score",
            "parse_statement",
        ),
        "voirdire.protocols.qa_entailment.partial_marks": ("InferenceExplanation", "parse_explanation"),
        "voirdire.protocols.qa_entailment.protocol": ("QAEntailmentGrading", "QAEntailmentParams", "Roles"),
        "voirdire.protocols.qa_entailment.report": ("QAReport", "report", "score"),
        "voirdire.protocols.qa_entailment.scoring": (
            "SystemReport", "f1_judgments", "lexical_judgments", "partial_mark_aurocs", "system_reports",
        ),
        "voirdire.protocols.qa_entailment.token_f1": ("f1_judgment", "max_token_f1", "token_f1"),
    },
)

__all__ = [
    "CLOSENESS_SCALE",
    "DIFFICULTY_SCALE",
    "EVOUNA_SYSTEMS",
    "EVOUNA_SYSTEM_NAMES",
    "DatasetError",
    "DecisionVariant",
    "EntailmentBackend",
    "EntailmentLabel",
    "EntailmentOutcome",
    "GradedItem",
    "HierarchyCell",
    "InferenceExplanation",
    "LexicalMatchGrading",
    "LexicalMatchParams",
    "Membership",
    "ParseFailure",
    "QAEntailmentGrading",
    "QAEntailmentParams",
    "QAItem",
    "QAReport",
    "Roles",
    "SystemReport",
    "TokenF1Grading",
    "TokenF1Params",
    "exact_match",
    "f1_judgment",
    "f1_judgments",
    "hierarchy_counts",
    "judged_correct",
    "lexical_judgments",
    "lexical_match",
    "load_dataset",
    "load_evouna",
    "load_jsonl",
    "max_token_f1",
    "membership",
    "normalize_answer",
    "parse_entailment",
    "parse_explanation",
    "parse_score",
    "parse_statement",
    "partial_mark_aurocs",
    "report",
    "score",
    "system_reports",
    "token_f1",
]
