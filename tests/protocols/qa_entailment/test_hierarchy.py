"""Answer hierarchy (§3, App. B.1): every cell, multiple gold answers, unknown directions, both variants."""

from __future__ import annotations

import pytest

from voirdire.protocols.qa_entailment.hierarchy import (
    GoldEntailment,
    HierarchyCell,
    cell_of,
    hierarchy_counts,
    judged_correct,
    membership,
)

E, N, C = "entailment", "neutral", "contradiction"


def _g(i: int, sup: str | None, inf: str | None) -> GoldEntailment:
    return GoldEntailment(gold_index=i, system_entails_gold=sup, gold_entails_system=inf)


@pytest.mark.parametrize(
    ("sup", "inf", "cell", "rank"),
    [
        (E, N, HierarchyCell.SUP_ONLY, 1),
        (E, E, HierarchyCell.BOTH, 2),
        (N, E, HierarchyCell.INF_ONLY, 3),
        (C, N, HierarchyCell.NEITHER, 4),
    ],
)
def test_every_cell_from_one_gold(sup: str, inf: str, cell: HierarchyCell, rank: int) -> None:
    m = membership([_g(0, sup, inf)])
    assert m.cell is cell and cell.rank == rank
    assert (m.in_sup, m.in_inf) == (cell.in_sup, cell.in_inf)


# App. B.1 / Table 11: "union" accepts A_sup ∪ A_inf; "minus" drops A_inf − A_sup.
EXPECTED = {
    HierarchyCell.SUP_ONLY: {"union": True, "minus": True},
    HierarchyCell.BOTH: {"union": True, "minus": True},
    HierarchyCell.INF_ONLY: {"union": True, "minus": False},
    HierarchyCell.NEITHER: {"union": False, "minus": False},
}


@pytest.mark.parametrize("cell", list(HierarchyCell))
@pytest.mark.parametrize("variant", ["union", "minus"])
def test_decision_variants(cell: HierarchyCell, variant: str) -> None:
    assert judged_correct(cell, variant) is EXPECTED[cell][variant]  # type: ignore[arg-type]
    m = membership([_g(0, E if cell.in_sup else N, E if cell.in_inf else N)])
    assert judged_correct(m, variant) is EXPECTED[cell][variant]  # type: ignore[arg-type]


def test_witnesses_may_be_different_gold_answers() -> None:
    m = membership([_g(0, E, N), _g(1, N, N), _g(2, C, E)])
    assert m.cell is HierarchyCell.BOTH
    assert m.sup_witnesses == [0] and m.inf_witnesses == [2]


def test_unknown_directions_use_three_valued_logic() -> None:
    # One unknown direction, no entailment anywhere: membership is open, not "no".
    open_ = membership([_g(0, N, None), _g(1, N, N)])
    assert open_.in_sup is False and open_.in_inf is None and open_.cell is None
    assert judged_correct(open_, "union") is None
    assert judged_correct(open_, "minus") is False  # minus depends on A_sup only, which is known
    # A known entailment decides membership even if another gold answer's reply was unreadable.
    decided = membership([_g(0, None, None), _g(1, E, N)])
    assert decided.in_sup is True and decided.in_inf is None and decided.cell is None
    assert judged_correct(decided, "union") is True and judged_correct(decided, "minus") is True
    with pytest.raises(ValueError):
        membership([])


def test_cell_of_and_counts() -> None:
    cells = [cell_of(True, False), cell_of(True, True), cell_of(True, True), cell_of(False, False), None]
    counts = hierarchy_counts(cells)
    assert list(counts) == ["A_sup - A_inf", "A_sup ∩ A_inf", "A_inf - A_sup", "S - (A_sup ∪ A_inf)", "undetermined"]
    assert list(counts.values()) == [1, 2, 0, 1, 1]
