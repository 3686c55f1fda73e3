"""The registrations of the entailment grader and its two model-free baselines (``plugin``'s cards stand for
them in the ``voirdire.protocols`` group); ``voirdire qa-eval`` serves all three."""

from __future__ import annotations

from pathlib import Path

from voirdire.kit import Registration

from .baselines import LexicalMatchGrading, TokenF1Grading
from .budget import ENTAILMENT_BUDGET, NO_MODEL_BUDGET
from .charts import qa_charts
from .cli import LEXICAL, QA_EVAL, TOKEN_F1
from .protocol import QAEntailmentGrading
from .report import report
from .reproduce import REPRODUCTIONS

qa_entailment = Registration(
    protocol=QAEntailmentGrading,
    report=report,
    cli=QA_EVAL,
    charts=qa_charts,
    reproductions=REPRODUCTIONS,
    budget=ENTAILMENT_BUDGET,
    examples=Path(__file__).with_name("paper_examples"),  # App. A.1's working example, App. D's explanation
)
qa_lexical = Registration(
    protocol=LexicalMatchGrading, report=report, cli=LEXICAL, charts=qa_charts, budget=NO_MODEL_BUDGET
)
qa_token_f1 = Registration(
    protocol=TokenF1Grading, report=report, cli=TOKEN_F1, charts=qa_charts, budget=NO_MODEL_BUDGET
)
