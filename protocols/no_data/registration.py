"""The No-Data Algorithm's registration (``plugin``'s card stands for it in the ``voirdire.protocols`` group)."""

from __future__ import annotations

from voirdire.kit import Registration

from .budget import NO_DATA_BUDGET
from .charts import no_data_charts
from .cli import NODATA
from .protocol import NoDataProtocol
from .report import report
from .reproduce import REPRODUCTIONS

no_data = Registration(
    protocol=NoDataProtocol,
    report=report,
    cli=NODATA,
    charts=no_data_charts,
    reproductions=REPRODUCTIONS,
    budget=NO_DATA_BUDGET,
)
