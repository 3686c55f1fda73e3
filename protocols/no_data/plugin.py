"""The No-Data Algorithm's registration (entry point ``no_data`` in the ``voirdire.protocols`` group)."""

from __future__ import annotations

from voirdire.registry import Registration

from .cli import NODATA
from .protocol import NoDataProtocol
from .report import report

no_data = Registration(protocol=NoDataProtocol, report=report, cli=NODATA)
