"""``voirdire.base.Column``: a number per session in fixed-size chunks, read and written as the array it stands
for, across its chunks' edges (docs/performance.md, flat memory)."""

from __future__ import annotations

from array import array

import pytest

from voirdire.base import Column
from voirdire.base.columns import _SIZE


@pytest.mark.parametrize("n", [0, 1, _SIZE - 1, _SIZE, _SIZE + 1, 3 * _SIZE + 7])
def test_reads_writes_and_counts_as_an_array(n: int) -> None:
    col, ref = Column("q", -1), array("q")
    for k in range(n):
        col.append(k % 5)
        ref.append(k % 5)
    for k in range(0, n, 3):
        col[k] = ref[k] = -1
    assert len(col) == n and list(col) == list(ref)
    assert [col.count(v) for v in (-1, 0, 4, 9)] == [ref.count(v) for v in (-1, 0, 4, 9)]
    if n:
        assert col[0] == ref[0] and col[-1] == ref[-1] and col[n - 1] == ref[n - 1]
    for bad in (n, -n - 1):
        with pytest.raises(IndexError):
            col[bad]
        with pytest.raises(IndexError):
            col[bad] = 1


def test_a_sized_column_holds_its_fill_and_keeps_its_type() -> None:
    col = Column("B", 2, size=_SIZE + 2)
    assert len(col) == _SIZE + 2 and col.count(2) == _SIZE + 2 and col.typecode == "B"
    col[_SIZE] = True  # a verdict's bool, as a bytearray takes it
    assert col[_SIZE] == 1 and col.count(2) == _SIZE + 1
    with pytest.raises(OverflowError):
        col[0] = 256  # the type's range, as the array's
    assert repr(Column("I", size=2)) == "Column('I', [0, 0])"
