from __future__ import annotations

import pytest

from voirdire.protocols.oracle_checker.theorems import failure_bound, guarantees, rejection_bound


def test_worked_numbers_of_section_3() -> None:
    assert rejection_bound(10, 0.1) == pytest.approx(0.936, abs=5e-4)
    assert rejection_bound(10, 0.05) == pytest.approx(0.765, abs=5e-4)


def test_theorem_3_1_branches() -> None:
    assert failure_bound(0.1) == pytest.approx(0.24)
    assert failure_bound(0.25) == pytest.approx(0.375)
    assert failure_bound(0.5) == pytest.approx(2 / 9)
    with pytest.raises(ValueError):
        failure_bound(0)
    assert rejection_bound(0, 0.1) == 0


def test_guarantee_text_names_tests_and_epsilon() -> None:
    g = guarantees(10, (0.1,))[0]
    assert "10 passing tests" in g.text() and "0.1-close" in g.text() and "0.936" in g.text()
