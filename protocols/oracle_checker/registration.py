"""The registrations of the oracle–checker scheme (``plugin``'s cards stand for them in the
``voirdire.protocols`` group)."""

from __future__ import annotations

from pathlib import Path

from voirdire.kit import Registration

from .budget import LINEARITY_BUDGET, PARAPHRASE_BUDGET
from .charts import oracle_charts
from .cli import ENTITIES_COMMAND, PARAPHRASE_COMMAND
from .linearity import LinearityChecker
from .paraphrase import ParaphraseChecker
from .paraphrase_report import report as paraphrase_report
from .report import report
from .reproduce import REPRODUCTIONS

oracle_entities = Registration(
    protocol=LinearityChecker,
    report=report,
    cli=ENTITIES_COMMAND,
    charts=oracle_charts,
    reproductions=REPRODUCTIONS,
    budget=LINEARITY_BUDGET,
)
oracle_paraphrase = Registration(
    protocol=ParaphraseChecker,
    report=paraphrase_report,
    cli=PARAPHRASE_COMMAND,
    charts=oracle_charts,
    budget=PARAPHRASE_BUDGET,
    examples=Path(__file__).with_name("paper_examples"),  # App. B, Tables 9-11 and 14
)
