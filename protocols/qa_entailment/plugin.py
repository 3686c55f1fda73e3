"""The QA grading registrations (entry points in the ``voirdire.protocols`` group)."""

from __future__ import annotations

from voirdire.options import ParamsCLI
from voirdire.registry import CommandSpec, Registration
from voirdire.report import generic_report

from .protocol import LexicalMatchGrading, QAEntailmentGrading, TokenF1Grading

qa_entailment = Registration(
    protocol=QAEntailmentGrading,
    report=generic_report,
    cli=CommandSpec(params=ParamsCLI(exclude=frozenset({"roles", "explain_cells", "nli_labels"}))),
)
qa_lexical = Registration(protocol=LexicalMatchGrading, report=generic_report)
qa_token_f1 = Registration(protocol=TokenF1Grading, report=generic_report)
