"""LMvLM cross-examination (Cohen et al. 2023) with its AYS and IDK baselines."""

from voirdire.protocols.cross_examination.baselines import AreYouSure, IDontKnow
from voirdire.protocols.cross_examination.protocol import (
    ClaimItem,
    CrossExamination,
    CrossExaminationParams,
    Examination,
)
from voirdire.protocols.cross_examination.scoring import Report, format_report, gold_correct, score

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
    "score",
]
