"""LMvLM cross-examination (Cohen et al. 2023) with its AYS and IDK baselines."""

from typing import TYPE_CHECKING

from voirdire.kit import lazy_face

if TYPE_CHECKING:
    from .baselines import AreYouSure, IDontKnow
    from .items import ClaimItem
    from .protocol import CrossExamination, CrossExaminationParams, Examination
    from .scoring import Report, format_report, gold_correct, report, score

# What runs: each name's module is imported at the name's first use (voirdire.base.faces).
__getattr__ = lazy_face(
    __name__,
    {
        "voirdire.protocols.cross_examination.baselines": ("AreYouSure", "IDontKnow"),
        "voirdire.protocols.cross_examination.items": ("ClaimItem",),
        "voirdire.protocols.cross_examination.protocol": ("CrossExamination", "CrossExaminationParams", "Examination"),
        "voirdire.protocols.cross_examination.scoring": ("Report", "format_report", "gold_correct", "report", "score"),
    },
)

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
