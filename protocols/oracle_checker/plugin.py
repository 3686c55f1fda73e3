"""The registrations of the oracle–checker scheme (entry points in the ``voirdire.protocols`` group)."""

from __future__ import annotations

from voirdire.registry import Registration

from .cli import ENTITIES_COMMAND
from .linearity import LinearityChecker
from .report import report

oracle_entities = Registration(protocol=LinearityChecker, report=report, cli=ENTITIES_COMMAND)
