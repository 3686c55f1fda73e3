"""A run's session ids kept compactly: one UTF-8 buffer and an array of end offsets, about the id's length plus
4 bytes each (8 past 4 GiB of ids), rather than a Python string and a list slot each. A run holds its ids from the
dataset's check to its report, so they must not grow faster than the ids themselves. A string is made only when an
id is read."""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema


class IdList(Sequence[str]):
    """A sequence of ids that is appended to and read, never changed in place. It compares equal to a list or
    tuple of the same strings, and pickles, copies and serialises (pydantic) as that list. ``in`` reads every id:
    a caller that asks many times builds a set."""

    __slots__ = ("_data", "_ends")

    def __init__(self, ids: Iterable[str] = ()) -> None:
        self._data = bytearray()
        self._ends = array("I")
        self.extend(ids)

    def append(self, sid: str) -> None:
        self._data += sid.encode("utf-8", "surrogatepass")
        try:
            self._ends.append(len(self._data))
        except OverflowError:  # past 4 GiB of ids: 8-byte offsets from here
            self._ends = array("q", self._ends)
            self._ends.append(len(self._data))

    def extend(self, ids: Iterable[str]) -> None:
        for sid in ids:
            self.append(sid)

    def __len__(self) -> int:
        return len(self._ends)

    def prefix(self, n: int) -> IdList:
        """The first ``n`` ids, as a new ``IdList`` (their bytes copied, no string made)."""
        head = IdList()
        n = max(0, min(n, len(self)))
        head._ends = self._ends[:n]
        head._data = self._data[: self._ends[n - 1]] if n else bytearray()
        return head

    def _at(self, i: int) -> str:
        start = self._ends[i - 1] if i else 0
        return self._data[start : self._ends[i]].decode("utf-8", "surrogatepass")

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self._at(j) for j in range(*i.indices(len(self)))]
        j = i + len(self) if i < 0 else i
        if not 0 <= j < len(self):
            raise IndexError("IdList index out of range")
        return self._at(j)

    def __iter__(self) -> Iterator[str]:
        data, start = self._data, 0
        for end in self._ends:
            yield data[start:end].decode("utf-8", "surrogatepass")
            start = end

    def __contains__(self, sid: object) -> bool:
        return isinstance(sid, str) and any(s == sid for s in self)

    def __eq__(self, other: object) -> bool:
        if type(self) is IdList and type(other) is IdList:
            return self._ends == other._ends and self._data == other._data
        if isinstance(other, IdList | list | tuple):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # as a list's

    def __repr__(self) -> str:
        return f"IdList({list(self)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (IdList, (list(self),))

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        """A field typed ``IdList`` takes one as it is (not copied) or a list of strings, and dumps as a list."""
        from_list = core_schema.no_info_after_validator_function(cls, core_schema.list_schema(core_schema.str_schema()))
        return core_schema.json_or_python_schema(
            json_schema=from_list,
            python_schema=core_schema.union_schema([core_schema.is_instance_schema(cls), from_list]),
            serialization=core_schema.plain_serializer_function_ser_schema(list, when_used="always"),
        )


class SeenIds:
    """Session ids in order of first appearance, where they are expected to come in a known order (``expected``: a
    run's own ids, in the order its sessions start): while they do, only how many came is kept, and the ids are
    ``expected``'s; from the first that does not, they are kept (``IdList``). A run in one process holds its ids
    once, not a second time in its live report."""

    __slots__ = ("_expected", "_followed", "_ids")

    def __init__(self, expected: IdList | None = None) -> None:
        self._expected = expected if expected is not None else IdList()
        self._followed = 0
        self._ids: IdList | None = None

    def append(self, sid: str) -> None:
        if self._ids is None:
            if self._followed < len(self._expected) and self._expected[self._followed] == sid:
                self._followed += 1
                return
            self._ids = self._expected.prefix(self._followed)
        self._ids.append(sid)

    def __len__(self) -> int:
        return self._followed if self._ids is None else len(self._ids)

    def ids(self) -> IdList:
        if self._ids is not None:
            return self._ids
        return self._expected if self._followed == len(self._expected) else self._expected.prefix(self._followed)
