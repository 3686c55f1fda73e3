"""Repeats (``--repeats N``, ``RunOptions.repeats``): each item examined N times, as N sessions of one item in one
transcript, to observe how far an endpoint's verdict on the same item varies.

A repeated session is named by a typed pair, its item's id and its repeat index (``SessionId``). The pair is
written as one string, ``ITEM@r2``, only so that every session of a run has its own key in the transcript (resume
and deduplication work by that key); nothing parses it back. The session's ``session_start`` carries both halves
as fields (``item_id``, ``repeat``), and every reader takes them from there. Each repeat draws with its own seeds:
every model role's seed becomes ``repeat_seed(seed, r)`` (the role's own seed, else 0, mixed with the repeat
index), which ``RoleSettings.create_args`` mixes in turn with a protocol's per-call seeds; the seeds are recorded
in the session (a ``repeat`` step, before the protocol's first transition). Greedy calls are sent again by every
repeat: a repeated session reads and writes no reply cache, and request coalescing never crosses sessions
(``Session``), so no repeat is answered by another's request.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from voirdire.base import IdList


class SessionId(str):
    """A repeated session's id: the pair (``item_id``, ``repeat``), 1-based, written as ``ITEM@rN``. A ``str``
    wherever a session id is one (transcript keys, resume, outcomes); pickled with its pair, so worker processes
    and Ray actors read the pair, never the string."""

    item_id: str
    repeat: int

    def __new__(cls, item_id: str, repeat: int) -> SessionId:
        if type(repeat) is not int or repeat < 1:
            raise ValueError(f"a repeat index is a whole number from 1, not {repeat!r}")
        sid = super().__new__(cls, f"{item_id}@r{repeat}")
        sid.item_id, sid.repeat = item_id, repeat
        return sid

    def __reduce__(self) -> tuple[Any, ...]:
        return SessionId, (self.item_id, self.repeat)


def repeat_id(item_id: str, repeat: int) -> SessionId:
    """The session id of repeat ``repeat`` (1-based) of an item."""
    return SessionId(item_id, repeat)


def item_of(sid: str) -> tuple[str, int | None]:
    """(item id, repeat index) of a session id: a ``SessionId``'s pair; any other id is its item's, no repeat."""
    return (sid.item_id, sid.repeat) if isinstance(sid, SessionId) else (sid, None)


def repeat_ids(item_ids: Sequence[str], repeats: int) -> IdList:
    """One session id per (item, repeat), each item's repeats together, in item order; the item ids themselves
    when ``repeats`` is 1 (a run without repeats is named as it always was). Kept compactly (``IdList``): a long
    run holds them to its end; an ``IdList`` given is not copied (it is only appended to, by whoever made it).
    With repeats, the ids are made as they are read (``RepeatIds``): a run of many repeats holds its item ids
    once, never items x repeats strings."""
    items = item_ids if isinstance(item_ids, IdList) else IdList(item_ids)
    return items if repeats == 1 else RepeatIds(items, repeats)


class RepeatIds(IdList):
    r"""The session ids of ``items`` x ``repeats`` (``SessionId``\ s, each item's together), made when read: the
    length and any id are known from the item ids alone, which may still grow (a dataset read as it runs). An
    ``IdList`` everywhere it is read (indexed, iterated, compared, pickled, dumped as a list); appended to only
    through its item ids."""

    __slots__ = ("_items", "_repeats")

    def __init__(self, items: IdList, repeats: int) -> None:
        super().__init__()
        self._items = items
        self._repeats = repeats

    def append(self, sid: str) -> None:
        raise TypeError("a run's repeat ids are made from its item ids: append the item id instead")

    def __len__(self) -> int:
        return len(self._items) * self._repeats

    def _at(self, i: int) -> str:
        return SessionId(self._items[i // self._repeats], i % self._repeats + 1)

    def __iter__(self) -> Iterator[str]:
        for i in self._items:
            for r in range(1, self._repeats + 1):
                yield SessionId(i, r)

    def __reduce__(self) -> tuple[Any, ...]:
        return RepeatIds, (self._items, self._repeats)

    def prefix(self, n: int) -> IdList:
        n = max(0, min(n, len(self)))
        return IdList(self._at(k) for k in range(n))


def repeat_seed(seed: int | None, repeat: int) -> int:
    """The seed of repeat ``repeat`` for a role whose seed is ``seed`` (None: 0): distinct for every repeat of
    one seed, within the 31 bits every provider takes."""
    return ((seed or 0) * 1_000_003 + repeat) % 2**31
