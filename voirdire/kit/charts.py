"""The paper's charts, declared as data (``ChartFold`` of ``BarChart``, ``LineChart``, ``ScatterChart``, with
their ``Series`` and ``Line``): the core draws them, a protocol only says what they show.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from voirdire.base import lazy_face

if TYPE_CHECKING:
    from voirdire.reports import (
        BarChart as BarChart,
        Chart as Chart,
        ChartFold as ChartFold,
        Line as Line,
        LineChart as LineChart,
        ScatterChart as ScatterChart,
        Series as Series,
    )

__getattr__, __dir__, __all__ = lazy_face(__name__)
