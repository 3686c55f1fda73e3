"""Entailment-based Open-QA grading with partial marks (Yao & Barbosa, "Accurate and Nuanced Open-QA Evaluation
Through Textual Entailment"), plus the model-free baselines it is compared with.

Modules: ``data`` (EVOUNA and generic JSONL), ``lexical`` and ``token_f1`` (model-free evaluators), ``parsing``
(strict reply parsers), ``hierarchy`` (answer sets and decision variants), ``partial_marks`` (App. D schemes),
``pipeline`` (the async evaluator: QA2D -> entailment both ways -> hierarchy -> partial marks), ``nli``
(cross-encoder backend; imports torch, so it is not imported here), ``report`` (scores against human
judgments), ``reliability`` (agreement across seeds). See docs/qa_entailment.md.
"""

from .data import EVOUNA_SYSTEM_NAMES, EVOUNA_SYSTEMS, DatasetError, QAItem, load_dataset, load_evouna, load_jsonl
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
from .pipeline import (
    STATES,
    Ask,
    EntailmentBackend,
    EntailmentEvaluatorConfig,
    Exchange,
    GradedItem,
    LLMEntailment,
    OnEvent,
    Roles,
    grade_item,
    make_entailment_backend,
)
from .report import SystemReport, f1_judgments, lexical_judgments, partial_mark_aurocs, system_reports
from .token_f1 import f1_judgment, max_token_f1, token_f1

__all__ = [
    "CLOSENESS_SCALE",
    "DIFFICULTY_SCALE",
    "EVOUNA_SYSTEMS",
    "EVOUNA_SYSTEM_NAMES",
    "STATES",
    "Ask",
    "DatasetError",
    "DecisionVariant",
    "EntailmentBackend",
    "EntailmentEvaluatorConfig",
    "EntailmentLabel",
    "Exchange",
    "GradedItem",
    "HierarchyCell",
    "InferenceExplanation",
    "LLMEntailment",
    "Membership",
    "OnEvent",
    "ParseFailure",
    "QAItem",
    "Roles",
    "SystemReport",
    "exact_match",
    "f1_judgment",
    "f1_judgments",
    "grade_item",
    "hierarchy_counts",
    "judged_correct",
    "lexical_judgments",
    "lexical_match",
    "load_dataset",
    "load_evouna",
    "load_jsonl",
    "make_entailment_backend",
    "max_token_f1",
    "membership",
    "normalize_answer",
    "parse_entailment",
    "parse_explanation",
    "parse_score",
    "parse_statement",
    "partial_mark_aurocs",
    "system_reports",
    "token_f1",
]
