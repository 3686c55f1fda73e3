"""The answer hierarchy (§3, App. B.1): set membership from entailment in both directions.

A system answer a is in A_sup iff its statement entails the statement of some gold answer a*, and in A_inf iff
the statement of some gold answer entails it (§3: "This naturally extends to the case where multiple gold answers
are given"; the two witnesses may be different gold answers). The four cells, ranked as in Tables 9–10:
(1) A_sup − A_inf, (2) A_sup ∩ A_inf, (3) A_inf − A_sup, (4) S − (A_sup ∪ A_inf).

Decision variants (App. B.1, Table 11): "union" judges A_sup ∪ A_inf correct (the paper's default); "minus"
excludes A_inf − A_sup, i.e. judges exactly A_sup correct.

A direction whose entailment reply could not be parsed is unknown (None), and membership uses three-valued
logic: one known entailment is enough for "in", but "not in" needs every direction known.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel

from .parsing import EntailmentLabel

DecisionVariant = Literal["union", "minus"]
DECISION_VARIANTS: tuple[DecisionVariant, ...] = ("union", "minus")


class HierarchyCell(StrEnum):
    SUP_ONLY = "A_sup - A_inf"
    BOTH = "A_sup ∩ A_inf"
    INF_ONLY = "A_inf - A_sup"
    NEITHER = "S - (A_sup ∪ A_inf)"

    @property
    def rank(self) -> int:
        """Row number in Tables 9–10 (1 = most informative)."""
        return _RANKS[self]

    @property
    def in_sup(self) -> bool:
        return self in (HierarchyCell.SUP_ONLY, HierarchyCell.BOTH)

    @property
    def in_inf(self) -> bool:
        return self in (HierarchyCell.BOTH, HierarchyCell.INF_ONLY)


_RANKS = {HierarchyCell.SUP_ONLY: 1, HierarchyCell.BOTH: 2, HierarchyCell.INF_ONLY: 3, HierarchyCell.NEITHER: 4}


def cell_of(in_sup: bool, in_inf: bool) -> HierarchyCell:
    if in_sup:
        return HierarchyCell.BOTH if in_inf else HierarchyCell.SUP_ONLY
    return HierarchyCell.INF_ONLY if in_inf else HierarchyCell.NEITHER


class GoldEntailment(BaseModel):
    """Both entailment directions between the system statement and one gold statement (None = unknown)."""

    gold_index: int
    system_entails_gold: EntailmentLabel | None
    gold_entails_system: EntailmentLabel | None


class Membership(BaseModel):
    """Where a system answer sits in the hierarchy; ``cell`` is None when unknown directions leave it open."""

    in_sup: bool | None
    in_inf: bool | None
    # Gold indices whose statement witnesses membership (a entails a*; a* entails a).
    sup_witnesses: list[int]
    inf_witnesses: list[int]
    cell: HierarchyCell | None


def _any_entails(labels: Sequence[EntailmentLabel | None]) -> bool | None:
    if any(label == "entailment" for label in labels):
        return True
    if any(label is None for label in labels):
        return None
    return False


def membership(results: Sequence[GoldEntailment]) -> Membership:
    """Combine per-gold entailment results into hierarchy membership."""
    if not results:
        raise ValueError("membership needs the entailment results of at least one gold answer")
    in_sup = _any_entails([r.system_entails_gold for r in results])
    in_inf = _any_entails([r.gold_entails_system for r in results])
    cell = cell_of(in_sup, in_inf) if in_sup is not None and in_inf is not None else None
    return Membership(
        in_sup=in_sup,
        in_inf=in_inf,
        sup_witnesses=[r.gold_index for r in results if r.system_entails_gold == "entailment"],
        inf_witnesses=[r.gold_index for r in results if r.gold_entails_system == "entailment"],
        cell=cell,
    )


def judged_correct(m: Membership | HierarchyCell, variant: DecisionVariant = "union") -> bool | None:
    """The evaluator's judgment under a decision variant; None when unknown directions leave it open.

    Under "union" one known membership decides "correct" even if the cell itself is open."""
    if isinstance(m, HierarchyCell):
        return (m.in_sup or m.in_inf) if variant == "union" else m.in_sup
    if variant == "minus":
        return m.in_sup
    if variant != "union":
        raise ValueError(f"unknown decision variant {variant!r}; expected one of {DECISION_VARIANTS}")
    if m.in_sup or m.in_inf:
        return True
    if m.in_sup is False and m.in_inf is False:
        return False
    return None


def hierarchy_counts(cells: Iterable[HierarchyCell | None]) -> dict[str, int]:
    """Counts per cell in Table 9/10 order, plus "undetermined" for answers whose cell stayed open."""
    counts = {cell.value: 0 for cell in sorted(HierarchyCell, key=lambda c: c.rank)}
    counts["undetermined"] = 0
    for cell in cells:
        counts[cell.value if cell is not None else "undetermined"] += 1
    return counts
