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
    from .baselines import (
        LexicalMatchGrading as LexicalMatchGrading,
        LexicalMatchParams as LexicalMatchParams,
        TokenF1Grading as TokenF1Grading,
        TokenF1Params as TokenF1Params,
    )
    from .data import (
        EVOUNA_SYSTEM_NAMES as EVOUNA_SYSTEM_NAMES,
        EVOUNA_SYSTEMS as EVOUNA_SYSTEMS,
        DatasetError as DatasetError,
        QAItem as QAItem,
        load_dataset as load_dataset,
        load_evouna as load_evouna,
        load_jsonl as load_jsonl,
    )
    from .entailment import EntailmentBackend as EntailmentBackend, EntailmentOutcome as EntailmentOutcome
    from .graded import GradedItem as GradedItem
    from .hierarchy import (
        DecisionVariant as DecisionVariant,
        HierarchyCell as HierarchyCell,
        Membership as Membership,
        hierarchy_counts as hierarchy_counts,
        judged_correct as judged_correct,
        membership as membership,
    )
    from .lexical import (
        exact_match as exact_match,
        lexical_match as lexical_match,
        normalize_answer as normalize_answer,
    )
    from .parsing import (
        CLOSENESS_SCALE as CLOSENESS_SCALE,
        DIFFICULTY_SCALE as DIFFICULTY_SCALE,
        EntailmentLabel as EntailmentLabel,
        ParseFailure as ParseFailure,
        parse_entailment as parse_entailment,
        parse_score as parse_score,
        parse_statement as parse_statement,
    )
    from .partial_marks import InferenceExplanation as InferenceExplanation, parse_explanation as parse_explanation
    from .protocol import (
        QAEntailmentGrading as QAEntailmentGrading,
        QAEntailmentParams as QAEntailmentParams,
        Roles as Roles,
    )
    from .report import QAReport as QAReport, report as report, score as score
    from .scoring import (
        SystemReport as SystemReport,
        f1_judgments as f1_judgments,
        lexical_judgments as lexical_judgments,
        partial_mark_aurocs as partial_mark_aurocs,
        system_reports as system_reports,
    )
    from .token_f1 import f1_judgment as f1_judgment, max_token_f1 as max_token_f1, token_f1 as token_f1

# Every name re-exported above (`X as X`) is exported, imported at its first use (voirdire.base.faces).
__getattr__, __dir__, __all__ = lazy_face(__name__)
