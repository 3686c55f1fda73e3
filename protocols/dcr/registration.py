"""The registration of DCR (``plugin``'s card stands for it in the ``voirdire.protocols`` group)."""

from __future__ import annotations

from pathlib import Path

from voirdire.kit import Registration

from .budget import DCR_BUDGET
from .charts import dcr_charts
from .cli import DCR_COMMAND
from .protocol import DCR
from .report import report
from .reproduce import REPRODUCTIONS

dcr = Registration(
    protocol=DCR,
    report=report,
    cli=DCR_COMMAND,
    charts=dcr_charts,
    reproductions=REPRODUCTIONS,
    budget=DCR_BUDGET,
    examples=Path(__file__).with_name("paper_examples"),  # App. A.1 Table 6, App. A.3 Tables 13-17
)
