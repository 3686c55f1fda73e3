"""A fold's per-session values kept out of memory, so a report's memory stays flat: each value is pickled to an
unnamed temporary file as its session ends, and only its offset (8 bytes) stays in memory. ``finish`` gets them
back as a read-only sequence that unpickles one value at a time, so a report of 100,000 sessions holds no object
per session unless the report keeps one (LMvLM's rows are read back only where its JSON shows them).

A fold asks for it with ``ReportFold(..., spooled=True)``; its values must pickle (plain data, NamedTuples of
module-level classes). Values are stored in memory as before for every other fold.
"""

from __future__ import annotations

import pickle
import tempfile
from array import array
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any, overload

from voirdire.base import Column

_NONE = -1  # a place whose value is not kept yet (its session has not ended)


class Kept:
    """The values in a list: a fold whose values are small, or that was not asked to spool."""

    def __init__(self) -> None:
        self.items: list[Any] = []

    def __len__(self) -> int:
        return len(self.items)

    def add(self) -> None:
        self.items.append(None)

    def put(self, place: int, value: Any) -> None:
        self.items[place] = value

    def view(self, places: Sequence[int]) -> Sequence[Any]:
        return [self.items[p] for p in places]


class Spool:
    """The values pickled to a temporary file, each place's offset in an array; a value replaced (a later attempt
    that counts) is written again and the place points at the new copy."""

    def __init__(self, places: int = 0) -> None:
        self._file: IO[bytes] | None = None
        self._at = Column("q", _NONE, places)  # in chunks: a long run's offsets are not copied as they grow
        self._dirty = False  # written since the last flush
        self._end = 0  # the file's length
        self._moved = False  # read since the last write: the file's position is not its end

    def __len__(self) -> int:
        return len(self._at)

    def add(self) -> None:
        self._at.append(_NONE)

    def put(self, place: int, value: Any) -> None:
        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix="voirdire-report-")  # noqa: SIM115 -- lives as long as the views
        f = self._file
        if self._moved:  # back to the end only after a read: a seek to the end flushes the buffer each time
            f.seek(self._end)
            self._moved = False
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        f.write(data)
        self._at[place] = self._end
        self._end += len(data)
        self._dirty = True

    def get(self, place: int) -> Any:
        at = self._at[place]
        if at == _NONE or self._file is None:
            return None
        if self._dirty:
            self._file.flush()
            self._dirty = False
        self._moved = True
        self._file.seek(at)
        return pickle.load(self._file)

    def view(self, places: Sequence[int]) -> Sequence[Any]:
        # the builder's own array or range of places is not copied: it is made for this view and not changed after
        return Values(self.get, places if isinstance(places, array | range) else array("q", places))


class Values(Sequence[Any]):
    """A read-only sequence of values fetched by place (``Spool.get``) each time one is asked for; ``mapped`` gives
    each a function applied (LMvLM's rows of its values). It compares, pickles and copies as the list it stands
    for, so that a report holding one serialises, compares and copies as before."""

    def __init__(
        self, get: Callable[[int], Any], places: array[int] | range, mapped: Callable[[Any], Any] | None = None
    ) -> None:
        self._get, self._places, self._mapped = get, places, mapped

    def __len__(self) -> int:
        return len(self._places)

    @overload
    def __getitem__(self, i: int) -> Any: ...
    @overload
    def __getitem__(self, i: slice) -> list[Any]: ...
    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return [self._one(p) for p in self._places[i]]
        return self._one(self._places[i])

    def __iter__(self) -> Iterator[Any]:
        return (self._one(p) for p in self._places)

    def _one(self, place: int) -> Any:
        value = self._get(place)
        return value if self._mapped is None else self._mapped(value)

    def map(self, f: Callable[[Any], Any]) -> Values:
        """The same places, each value passed through ``f`` (after any function already given)."""
        g = f if self._mapped is None else (lambda v, before=self._mapped: f(before(v)))
        return Values(self._get, self._places, g)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Values | list | tuple):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # as a list's

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (list(self),))

    def __repr__(self) -> str:
        return f"Values({len(self)} values, read back from a temporary file)"


def map_values(values: Sequence[Any], f: Callable[[Any], Any]) -> Sequence[Any]:
    """``f`` of each value: lazily for spooled values (nothing held), as a list for values held in memory."""
    if isinstance(values, Values):
        return values.map(f)
    return [f(v) for v in values]
