"""The model calls of grading one answer by entailment (Yao & Barbosa, §3, App. A.1, App. D), declared beside the
machine for ``--estimate``; the lexical and token-F1 baselines call no model.

With G gold answers in use (blank ones skipped, at most ``max_gold_answers``): QA2D turns the system answer and each
gold answer into a statement (1 + G calls, fewer when gold statements are shared between sessions), the model tests
entailment both ways against each gold statement (2G calls; none with the NLI backend), and in an explained cell
each witnessing gold statement may be explained (App. D, Table 17 row 1: at most G calls) and its difficulty rated
(row 2: at most G more), and the direct LLM Score asked once (row 3). An empty answer or an item without a usable
gold answer calls no model. Every figure is fixed by the item and the parameters: a bound.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from voirdire.kit.budget import Budget, CallBudget, Figure, RoleCalls, merged

from .graded import GradedItem


def entailment_budget(protocol: Any, item: Any, figures: Mapping[str, Figure]) -> Budget:
    p, roles = protocol.params, protocol.params.roles
    g = len(GradedItem.start(item, p.decision, p.max_gold_answers).gold_answers)
    if not g or not item.system_answer.strip():
        return Budget()  # decided without a model call (§3: nothing to convert)
    parts: dict[str, list[RoleCalls]] = {}

    def add(role: str, calls: int, why: str) -> None:
        parts.setdefault(role, []).append(RoleCalls.of(calls, why=why))

    add(roles.qa2d, 1 + g, f"QA2D of the answer and {g} gold answer(s) (App. A.1)")
    if p.backend == "llm" and getattr(protocol, "_backend", None) is None:
        add(roles.entailment, 2 * g, f"entailment both ways against {g} gold statement(s) (App. A.1)")
    if p.explain or p.inference_llm_score:
        add(roles.explanation, g, f"at most {g} explanation(s) in an explained cell (App. D, Table 17 row 1)")
    if p.inference_llm_score:
        add(roles.scoring, g, f"at most {g} difficulty rating(s) (Table 17 row 2)")
    if p.llm_score:
        add(roles.scoring, 1, "the direct LLM Score (Table 17 row 3)")
    return merged(parts)


def no_model_budget(protocol: Any, item: Any, figures: Mapping[str, Figure]) -> Budget:
    return Budget()


ENTAILMENT_BUDGET = CallBudget(per_item=entailment_budget, paper="Yao & Barbosa §3, App. A.1, App. D (Table 17)")
NO_MODEL_BUDGET = CallBudget(per_item=no_model_budget, paper="a rule: no model call")
