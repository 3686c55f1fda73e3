"""The No-Data Algorithm's registration (entry point in the ``voirdire.protocols`` group)."""

from __future__ import annotations

from voirdire.options import ParamsCLI
from voirdire.registry import CommandSpec, Registration
from voirdire.report import generic_report

from .protocol import NoDataProtocol

no_data = Registration(protocol=NoDataProtocol, report=generic_report, cli=CommandSpec(params=ParamsCLI(exclude=frozenset({"data"}))))
