"""The model calls of one No-Data datapoint (de Wynter 2025, Alg. 1 with the EV protocol of §6.1), declared beside
its machine for ``--estimate``.

The verifier is always a rule (§8.0.3) and so is the decision-tree evaluator (§8.0.2): such runs call no model.
With the LLM evaluator (App. D.2) each of the r rounds asks it to label x (Prompt 1: every round, or the first one
alone without ``relabel_each_round``) and, when it also generates, to propose x' (Prompt 2 or 3); each of those asks
is up to ``attempts`` independent calls until a reply parses (App. D.2: five). A failed challenge ends the rounds
early (§6.1.2), so r rounds bound every datapoint.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from voirdire.kit.budget import Budget, CallBudget, Figure, RoleCalls, merged


def no_data_budget(protocol: Any, item: Any, figures: Mapping[str, Figure]) -> Budget:
    p = protocol.params
    if p.evaluator != "llm":
        return Budget()  # rule players only: the decision tree (or an evaluator given in code) and the verifier
    r, k = p.rounds, p.attempts
    labels = r if p.relabel_each_round else 1
    parts = [RoleCalls.of(labels * k, why=f"{labels} label ask(s) (Prompt 1) × up to {k} attempts (App. D.2)")]
    if p.generator == "llm":
        parts.append(RoleCalls.of(r * k, why=f"{r} proposal ask(s) (Prompt 2/3) × up to {k} attempts"))
    return merged({"evaluator": parts})


NO_DATA_BUDGET = CallBudget(
    per_item=no_data_budget, paper="No-Data Alg. 1, §6.1 (r rounds, --rounds) and App. D.2 (five attempts, --attempts)"
)
