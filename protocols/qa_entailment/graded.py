"""What grading one system answer produced, and how it is written into the session's verdict.

``GradedItem`` collects the statements (QA2D), both entailment tests per gold answer, the membership and cell of
the answer hierarchy with the judgment under both decision variants (§3, App. B.1), and the partial marks with one
ranking score per scheme (App. D). ``verdict_statistics`` keeps what the report needs in the verdict, so a
transcript alone can be re-scored; ``verdict_evidence`` is what a reader sees.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field

from voirdire.kit import Statistics

from .data import QAItem
from .entailment import Direction, EntailmentOutcome
from .hierarchy import DECISION_VARIANTS, DecisionVariant, HierarchyCell, Membership, judged_correct
from .partial_marks import InferenceExplanation, ranking_score


def decision_word(judgment: bool | None) -> str:
    return {True: "correct", False: "incorrect", None: "undetermined"}[judgment]


def agrees(judgment: bool | None, human: bool | None) -> bool | None:
    return None if judgment is None or human is None else judgment == human


class EntailmentCall(BaseModel):
    gold_index: int
    direction: Direction
    premise: str
    hypothesis: str
    backend: str
    outcome: EntailmentOutcome


class ExplanationRecord(BaseModel):
    """One partial-mark chain: the inference explanation from S1 to S2 and what was read from it."""

    gold_index: int
    cell: HierarchyCell
    s1: str
    s2: str
    raw: str
    explanation: InferenceExplanation | None
    marks: dict[str, float] = Field(default_factory=dict)
    difficulty: int | None = None
    difficulty_raw: str | None = None


class GradedItem(BaseModel):
    item_id: str
    system: str
    question: str
    system_answer: str
    human_judgment: bool | None
    gold_answers: list[str]  # the gold answers used (blank ones dropped, capped by max_gold_answers)
    gold_indices: list[int]  # their indices in the item's gold list
    system_statement: str | None = None
    gold_statements: list[str | None] = Field(default_factory=list)
    entailment_calls: list[EntailmentCall] = Field(default_factory=list)
    membership: Membership | None = None
    cell: HierarchyCell | None = None
    decision: DecisionVariant
    judgment: bool | None = None  # under ``decision``; None = undetermined
    judgments: dict[str, bool | None] = Field(default_factory=lambda: dict.fromkeys(DECISION_VARIANTS))
    explanations: list[ExplanationRecord] = Field(default_factory=list)
    llm_score: int | None = None
    llm_score_raw: str | None = None
    partial_marks: dict[str, float | None] = Field(default_factory=dict)
    ranking_scores: dict[str, float | None] = Field(default_factory=dict)
    model_calls: int = 0
    # One record per unreadable reply: step, parser, reason, gold_index, direction, of (and the schemes it costs).
    failures: list[dict[str, Any]] = Field(default_factory=list)
    note: str | None = None

    @classmethod
    def start(cls, item: QAItem, decision: DecisionVariant, max_gold_answers: int | None) -> GradedItem:
        """Blank gold pieces are skipped (indices kept); ``max_gold_answers`` caps the rest in file order."""
        used = [(i, g) for i, g in enumerate(item.gold_answers) if g.strip()][:max_gold_answers]
        return cls(
            item_id=item.id,
            system=item.system,
            question=item.question,
            system_answer=item.system_answer,
            human_judgment=item.human_judgment,
            gold_answers=[g for _, g in used],
            gold_indices=[i for i, _ in used],
            decision=decision,
        )

    def place(self, where: Membership | HierarchyCell) -> None:
        """Put the answer in the hierarchy and judge it under every decision variant (App. B.1)."""
        self.cell = where.cell if isinstance(where, Membership) else where
        self.judgments = {v: judged_correct(where, v) for v in DECISION_VARIANTS}
        self.judgment = self.judgments[self.decision]

    def rank(self, schemes: Iterable[str], explained_cells: Iterable[HierarchyCell]) -> None:
        """One ranking score per partial-mark scheme, for AUROC against human judgments (Tables 3, 13)."""
        cells = tuple(explained_cells)
        for scheme in schemes:
            self.ranking_scores[scheme] = ranking_score(
                self.cell, self.partial_marks.get(scheme), explained_cells=cells
            )


def verdict_evidence(g: GradedItem) -> list[str]:
    out = []
    if g.system_statement is not None:
        out.append(f"system statement: {g.system_statement}")
    for index, answer, statement in zip(g.gold_indices, g.gold_answers, g.gold_statements, strict=False):
        out.append(f"gold statement {index} ({answer}): {statement if statement is not None else '(unreadable)'}")
    if g.membership is not None:
        m = g.membership
        out.append(f"{_member('A_sup', m.in_sup, m.sup_witnesses, 'entails')}; "
                   f"{_member('A_inf', m.in_inf, m.inf_witnesses, 'is entailed by')}")  # fmt: skip
    out.append(f"cell: {g.cell.value if g.cell else 'undetermined'}")
    if g.note:
        out.append(g.note)
    return out


def _member(cell: str, member: bool | None, witnesses: list[int], how: str) -> str:
    """One membership of §3's hierarchy as a sentence: ``in A_sup: the system statement entails gold statement 0``
    (A_sup: a entails some a*; A_inf: some a* entails a), not a Python value."""
    if member is None:
        return f"{cell} undetermined (an entailment reply was unreadable)"
    if not member:
        return f"not in {cell}: the system statement {how} no gold statement"
    golds = ", ".join(str(w) for w in witnesses)
    return f"in {cell}: the system statement {how} gold statement{'s' if len(witnesses) > 1 else ''} {golds}"


class QAOutcome(Statistics):
    """What the report reads of a QA verdict's statistics (``verdict_statistics``, the baselines' verdicts); every
    other statistic is kept as written."""

    judgment: bool | None = None  # under the decision variant; None = undetermined
    judgments: dict[str, bool | None] = Field(default_factory=dict)  # by decision variant (Table 11)
    decision_variant: str | None = None
    cell: str | None = None
    ranking_scores: dict[str, float | None] | None = None
    gold_indices: list[int] = Field(default_factory=list)
    model_calls: int = 0
    parse_failures: list[dict[str, Any]] = Field(default_factory=list)


def verdict_statistics(g: GradedItem, backend: str) -> dict[str, Any]:
    """What the report needs from one graded item, kept in its verdict so a transcript alone can be re-scored."""
    m = g.membership
    return {
        "evaluator": "entailment",
        "backend": backend,
        "decision_variant": g.decision,
        "system": g.system,
        "human_judgment": g.human_judgment,
        "judgment": g.judgment,
        "judgments": g.judgments,
        "agrees_with_human": agrees(g.judgment, g.human_judgment),
        "cell": g.cell.value if g.cell else None,
        "cell_rank": g.cell.rank if g.cell else None,
        "in_sup": m.in_sup if m else None,
        "in_inf": m.in_inf if m else None,
        "sup_witnesses": m.sup_witnesses if m else [],
        "inf_witnesses": m.inf_witnesses if m else [],
        "system_statement": g.system_statement,
        "gold_statements": g.gold_statements,
        "gold_indices": g.gold_indices,
        "explanations": [
            {
                "gold_index": r.gold_index,
                "n_steps": r.explanation.n_steps if r.explanation else None,
                "n_info": r.explanation.n_info if r.explanation else None,
                "n_assumption": r.explanation.n_assumption if r.explanation else None,
                "marks": r.marks,
                "difficulty": r.difficulty,
            }
            for r in g.explanations
        ],
        "partial_marks": g.partial_marks,
        "ranking_scores": g.ranking_scores,
        "llm_score": g.llm_score,
        "model_calls": g.model_calls,
        "parse_failures": g.failures,
        "note": g.note,
    }
