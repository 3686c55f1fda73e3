"""The registrations of LMvLM and its §4.1 baselines (entry points in the ``voirdire.protocols`` group)."""

from __future__ import annotations

from voirdire.registry import Registration

from .baselines import AreYouSure, IDontKnow
from .cli import BASELINE, EXAMINE
from .protocol import CrossExamination
from .scoring import report

cross_examination = Registration(protocol=CrossExamination, report=report, cli=EXAMINE)
ays = Registration(protocol=AreYouSure, report=report, cli=BASELINE)
idk = Registration(protocol=IDontKnow, report=report, cli=BASELINE)
