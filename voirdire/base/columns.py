"""A number per session, for as many sessions as a run has, in fixed-size chunks: appended to as sessions come, a
``Column`` is never copied into a larger block, as an ``array`` is (about 6 % more each time it fills). Those
copies leave freed blocks behind, which the process keeps: on a run of 60,000 sessions, about as many bytes a
session as the numbers themselves."""

from __future__ import annotations

from array import array
from collections.abc import Iterator

_SHIFT = 12
_SIZE = 1 << _SHIFT  # values a chunk: 4,096 (32 KiB of 8-byte values)
_MASK = _SIZE - 1


class Column:
    """Values of one ``array`` type code, appended, read and set by place; places not set yet hold ``fill``."""

    __slots__ = ("_chunks", "_fill", "_len", "typecode")

    def __init__(self, typecode: str, fill: int = 0, size: int = 0) -> None:
        self.typecode, self._fill = typecode, fill
        self._chunks: list[array[int]] = []
        self._len = 0
        for _ in range(size):
            self.append(fill)

    def append(self, value: int) -> None:
        at = self._len & _MASK
        if at == 0:
            self._chunks.append(array(self.typecode, [self._fill]) * _SIZE)
        self._chunks[-1][at] = value
        self._len += 1

    def _place(self, i: int) -> int:
        j = i + self._len if i < 0 else i
        if not 0 <= j < self._len:
            raise IndexError("Column index out of range")
        return j

    def __getitem__(self, i: int) -> int:
        j = self._place(i)
        return self._chunks[j >> _SHIFT][j & _MASK]

    def __setitem__(self, i: int, value: int) -> None:
        j = self._place(i)
        self._chunks[j >> _SHIFT][j & _MASK] = value

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[int]:
        left = self._len
        for chunk in self._chunks:
            yield from chunk if left >= _SIZE else chunk[:left]
            left -= _SIZE

    def count(self, value: int) -> int:
        if not self._chunks:
            return 0
        last = self._len - (len(self._chunks) - 1) * _SIZE  # the values in the last chunk
        return sum(c.count(value) for c in self._chunks[:-1]) + self._chunks[-1][:last].count(value)

    def __repr__(self) -> str:
        return f"Column({self.typecode!r}, {list(self)!r})"
