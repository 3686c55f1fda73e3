"""Sequential repeats (``--repeats N --stop-when-decided``): an item's repeats stop as soon as its decided or
undecided status at ``--decided-at`` can no longer change (``voirdire.reports.stability`` defines the status).

An item of N repeats is decided when one verdict holds at least ``decided_at`` of the repeats with a verdict. After
some repeats, the status is settled when every way the remaining ones could go gives the same status: decided once
one verdict already holds ``decided_at`` of N (less the repeats that failed), undecided once no verdict, nor a new
one, can reach it with every remaining repeat. The repeats are released in rounds, each of the fewest repeats that
could settle the status (all of them would run one at a time too), so the statuses are those of N full repeats and
no repeat runs that one-at-a-time would not. A repeat that fails counts as no verdict; the status is settled against
the repeats that could still give one.
"""

from __future__ import annotations

import asyncio
from collections import Counter, deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from voirdire.executors.repeats import item_of, repeat_id


def settled(counts: Mapping[str, int], failed: int, left: int, repeats: int, decided_at: float) -> bool:
    """Whether an item's status can no longer change: ``counts`` the verdicts of its finished repeats, ``failed``
    its repeats without one, ``left`` the repeats not run yet, of ``repeats`` in all."""
    return additional(counts, failed, left, repeats, decided_at) == 0


def additional(counts: Mapping[str, int], failed: int, left: int, repeats: int, decided_at: float) -> int:
    """The fewest more repeats after which the status could be settled (0: it is settled now)."""
    need = decided_at * (repeats - failed)  # the votes one verdict needs, when every remaining repeat gives one
    top = max(counts.values(), default=0)
    for x in range(left + 1):
        # Decided for sure: all x go to the leading verdict, and it holds its share of every repeat there can be.
        if top + x >= need - 1e-9:
            return x
        # Undecided for sure: the x spread over new verdicts, and no verdict reaches the share with every other one.
        if max(top, 1 if x else 0) + (left - x) < need - 1e-9:
            return x
    return left


@dataclass
class _Item:
    sids: deque[tuple[BaseModel, str]]
    counts: Counter[str] = field(default_factory=Counter)
    failed: int = 0
    in_flight: int = 0


class SequentialRepeats:
    """The pending (item, session id) pairs of a run with repeats, released as the items' statuses require:
    ``take()`` gives the next pair to run, ``WAIT`` while every released repeat is in flight and the next depend on
    their verdicts, or None when nothing is left. ``ended`` is told each session's decision (None: no verdict)."""

    WAIT: Any = object()

    def __init__(
        self,
        pending: Iterator[tuple[BaseModel, str]],
        *,
        repeats: int,
        decided_at: float,
        finished: Mapping[str, str | None] | None = None,
    ) -> None:
        self.pending = pending
        self.repeats = repeats
        self.decided_at = decided_at
        self.finished = dict(finished or {})  # resumed: sid -> decision of the repeats an earlier run finished
        self.items: dict[str, _Item] = {}
        self.ready: deque[tuple[BaseModel, str]] = deque()
        self.skipped = 0  # repeats never run: their item's status was settled
        self.exhausted = False
        self._changed = asyncio.Event()
        self._lookahead: tuple[BaseModel, str] | None = None

    # ------------------------------------------------------------------ the pairs
    def _group(self) -> tuple[str, _Item] | None:
        """The next item's pending repeats, with the verdicts of those an earlier run finished."""
        first = self._lookahead or next(self.pending, None)
        self._lookahead = None
        if first is None:
            self.exhausted = True
            return None
        item_id = item_of(first[1])[0]
        group: deque[tuple[BaseModel, str]] = deque([first])
        for pair in self.pending:
            if item_of(pair[1])[0] != item_id:
                self._lookahead = pair
                break
            group.append(pair)
        state = _Item(group)
        for r in range(1, self.repeats + 1):
            sid = repeat_id(item_id, r)
            if sid in self.finished:
                decision = self.finished.pop(sid)
                if decision is None:
                    state.failed += 1
                else:
                    state.counts[decision] += 1
        return item_id, state

    def _release(self, item_id: str, state: _Item) -> None:
        """Release the fewest repeats that could settle the item's status; drop the rest once it is settled."""
        if state.in_flight:
            return
        left = len(state.sids)
        x = additional(state.counts, state.failed, left, self.repeats, self.decided_at)
        if x == 0:
            self.skipped += left
            state.sids.clear()
            self.items.pop(item_id, None)
            return
        for _ in range(x):
            self.ready.append(state.sids.popleft())
            state.in_flight += 1

    def take(self) -> Any:
        while not self.ready:
            if self.exhausted:
                return None if not self.items else self.WAIT
            group = self._group()
            if group is None:
                return None if not self.items else self.WAIT
            item_id, state = group
            self.items[item_id] = state
            self._release(item_id, state)
        return self.ready.popleft()

    async def changed(self) -> None:
        """Wait until a session ends (and may have released more)."""
        self._changed.clear()
        await self._changed.wait()

    def ended(self, sid: str, decision: str | None) -> None:
        item_id = item_of(sid)[0]
        state = self.items.get(item_id)
        if state is not None:
            state.in_flight -= 1
            if decision is None:
                state.failed += 1
            else:
                state.counts[decision] += 1
            self._release(item_id, state)
        self._changed.set()

    def stop(self) -> None:
        """The run stopped: nothing more is released, and those waiting are woken to end."""
        self.items.clear()
        self.ready.clear()
        self.exhausted = True
        self._changed.set()
