"""Repeats (``--repeats N``, ``RunOptions.repeats``): each item examined N times, as N sessions of one item in one
transcript, to observe how far an endpoint's verdict on the same item varies.

A repeated session's id is the item's id with its repeat index (``ITEM@r2``), so resume and deduplication, which
work by session id, tell the repeats apart; its ``session_start`` keeps the item's own id, so readers group the
repeats by item. Each repeat draws with its own seeds: every model role's seed becomes ``repeat_seed(seed, r)``
(the role's own seed, else 0, mixed with the repeat index), which ``RoleSettings.create_args``
mixes in turn with a protocol's per-call seeds; the seeds are recorded in the session (a ``repeat`` step, before
the protocol's first transition). Greedy calls are sent again by every repeat: a repeated session reads and writes
no reply cache, and request coalescing never crosses sessions (``Session``), so no repeat is answered by another's
request.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from voirdire.base import IdList
from voirdire.reports import REPEAT_STEP as REPEAT_STEP  # the step each repeated session records first

REPEAT_MARK = "@r"


def repeat_id(item_id: str, repeat: int) -> str:
    """The session id of repeat ``repeat`` (1-based) of an item."""
    return f"{item_id}{REPEAT_MARK}{repeat}"


def repeat_ids(item_ids: Sequence[str], repeats: int) -> IdList:
    """One session id per (item, repeat), each item's repeats together, in item order; the item ids themselves
    when ``repeats`` is 1 (a run without repeats is named as it always was). Kept compactly (``IdList``): a long
    run holds them to its end; an ``IdList`` given is not copied (it is only appended to, by whoever made it).
    With repeats, the ids are made as they are read (``RepeatIds``): a run of many repeats holds its item ids
    once, never items x repeats strings."""
    items = item_ids if isinstance(item_ids, IdList) else IdList(item_ids)
    return items if repeats == 1 else RepeatIds(items, repeats)


class RepeatIds(IdList):
    """The session ids of ``items`` x ``repeats`` (``ITEM@r1`` .. ``ITEM@rN``, each item's together), made when
    read: the length and any id are known from the item ids alone. An ``IdList`` everywhere (indexed, iterated,
    compared, pickled, dumped as a list); appending to it first writes its ids out, once."""

    __slots__ = ("_items", "_repeats")

    def __init__(self, items: IdList, repeats: int) -> None:
        super().__init__()
        self._items: IdList | None = items
        self._repeats = repeats

    def _lazy(self) -> tuple[IdList, int] | None:
        return None if self._items is None else (self._items, self._repeats)

    def append(self, sid: str) -> None:
        if (lazy := self._lazy()) is not None:  # written out first: appended ids follow the made ones
            self._items = None
            items, repeats = lazy
            for i in items:
                for r in range(1, repeats + 1):
                    super().append(repeat_id(i, r))
        super().append(sid)

    def __len__(self) -> int:
        lazy = self._lazy()
        return super().__len__() if lazy is None else len(lazy[0]) * lazy[1]

    def _at(self, i: int) -> str:
        lazy = self._lazy()
        if lazy is None:
            return super()._at(i)
        return repeat_id(lazy[0][i // lazy[1]], i % lazy[1] + 1)

    def __iter__(self) -> Iterator[str]:
        lazy = self._lazy()
        if lazy is None:
            yield from super().__iter__()
            return
        items, repeats = lazy
        for i in items:
            for r in range(1, repeats + 1):
                yield repeat_id(i, r)

    def __reduce__(self) -> tuple[Any, ...]:
        lazy = self._lazy()
        return super().__reduce__() if lazy is None else (RepeatIds, lazy)

    def prefix(self, n: int) -> IdList:
        n = max(0, min(n, len(self)))
        return IdList(self._at(k) for k in range(n))


def split_repeat(session_id: str) -> tuple[str, int]:
    """(item id, repeat index) of a repeated session's id (``repeat_id``'s inverse)."""
    item_id, mark, index = session_id.rpartition(REPEAT_MARK)
    if not mark or not index.isdigit():
        raise ValueError(f"session id {session_id!r} names no repeat ({REPEAT_MARK}N)")
    return item_id, int(index)


def repeat_seed(seed: int | None, repeat: int) -> int:
    """The seed of repeat ``repeat`` for a role whose seed is ``seed`` (None: 0): distinct for every repeat of
    one seed, within the 31 bits every provider takes."""
    return ((seed or 0) * 1_000_003 + repeat) % 2**31
