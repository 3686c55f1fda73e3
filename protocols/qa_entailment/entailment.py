"""The entailment test of §3 and App. A.1 (Table 14 row 2): what one test yields, and what a local backend offers.

The grader runs the test between the system statement and every gold statement in both directions: system ⇒ gold
decides membership in A_sup, gold ⇒ system membership in A_inf. The test is a prompt to the evaluator model, or a
local NLI cross-encoder (App. C.1, "Entailment (small)"; ``nli.CrossEncoderNLI``) behind ``EntailmentBackend``.
"""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import BaseModel

from .parsing import EntailmentLabel, ParseFailure

Direction = Literal["system_entails_gold", "gold_entails_system"]


class EntailmentOutcome(BaseModel):
    """One entailment test: the label (None when the model's reply could not be read) and what it came from."""

    label: EntailmentLabel | None
    raw: str | None = None  # the model's reply (LLM test)
    probabilities: dict[str, float] | None = None  # class probabilities (NLI backend)
    failure: ParseFailure | None = None  # why the reply could not be read


class EntailmentBackend(Protocol):
    """An entailment test that needs no model role (an NLI cross-encoder)."""

    name: str

    async def entail(self, premise: str, hypothesis: str) -> EntailmentOutcome: ...
