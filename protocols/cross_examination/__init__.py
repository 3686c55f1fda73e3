"""LMvLM cross-examination (Cohen et al. 2023) with its AYS and IDK baselines."""

from typing import TYPE_CHECKING

from voirdire.kit import lazy_face

if TYPE_CHECKING:
    from .baselines import AreYouSure as AreYouSure, IDontKnow as IDontKnow
    from .items import ClaimItem as ClaimItem
    from .protocol import (
        CrossExamination as CrossExamination,
        CrossExaminationParams as CrossExaminationParams,
        Examination as Examination,
    )
    from .scoring import (
        Report as Report,
        format_report as format_report,
        gold_correct as gold_correct,
        report as report,
        score as score,
    )

# Every name re-exported above (`X as X`) is exported, imported at its first use (voirdire.base.faces).
__getattr__, __dir__, __all__ = lazy_face(__name__)
