"""The registrations of LMvLM and its §4.1 baselines (``plugin``'s cards stand for them in the
``voirdire.protocols`` group)."""

from __future__ import annotations

from pathlib import Path

from voirdire.kit import Registration

from .api import API
from .baselines import AreYouSure, IDontKnow
from .budget import BASELINE_BUDGET, EXAMINATION_BUDGET
from .charts import lmvlm_charts
from .cli import AYS, EXAMINE, IDK
from .protocol import CrossExamination
from .reproduce import REPRODUCTIONS
from .scoring import report

cross_examination = Registration(
    protocol=CrossExamination,
    report=report,
    cli=EXAMINE,
    charts=lmvlm_charts,
    reproductions=REPRODUCTIONS,
    api=API,
    budget=EXAMINATION_BUDGET,
    examples=Path(__file__).with_name("paper_examples"),  # Appendix C, Tables 13-20
)
ays = Registration(protocol=AreYouSure, report=report, cli=AYS, charts=lmvlm_charts, budget=BASELINE_BUDGET)
idk = Registration(protocol=IDontKnow, report=report, cli=IDK, charts=lmvlm_charts, budget=BASELINE_BUDGET)
