"""LMvLM cross-examination (Cohen et al. 2023) with its AYS and IDK baselines."""

from .baselines import AreYouSure, IDontKnow
from .items import ClaimItem
from .protocol import CrossExamination, CrossExaminationParams, Examination
from .scoring import Report, format_report, gold_correct, report, score

__all__ = [
    "AreYouSure",
    "ClaimItem",
    "CrossExamination",
    "CrossExaminationParams",
    "Examination",
    "IDontKnow",
    "Report",
    "format_report",
    "gold_correct",
    "report",
    "score",
]
