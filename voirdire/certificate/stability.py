"""Repeats as one item, where the certificate compares verdicts with people or with another run (``calibrate``,
``compare``'s paired tests): an item examined N times (``--repeats N``) stands for one verdict, the majority of
its repeats (``voirdire.reports.majority``), so that it counts once, as every other item does. How much the
repeats disagree is the report's stability section (``voirdire.reports.stability``), not calibration's concern.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Protocol, TypeVar

from voirdire.reports import majority
from voirdire.transcript import SessionRecord


class _Session(Protocol):
    @property
    def session_id(self) -> str: ...
    @property
    def item_id(self) -> str: ...
    @property
    def decision(self) -> str | None: ...


S = TypeVar("S", bound=_Session)


def is_repeat(session: SessionRecord) -> bool:
    """Whether a session is a repeat of its item (``SessionRecord.repeat``)."""
    return session.repeat is not None


def one_per_item(sessions: Sequence[S], repeated: set[str], **no_verdict: Any) -> list[S]:
    """``sessions`` (dataclasses with ``session_id``, ``item_id`` and ``decision``) with each item's repeats
    replaced by one: the first repeat that gave the majority decision, where the first repeat of the item stood.
    An item whose repeats tie keeps its first repeat with ``decision=None`` and the fields ``no_verdict`` names
    (``accepted=None``...), so that it counts as an item without a verdict. Other sessions are kept as they are."""
    by_item: dict[str, list[S]] = {}
    for s in sessions:
        if s.session_id in repeated:
            by_item.setdefault(s.item_id, []).append(s)
    out: list[S] = []
    for s in sessions:
        if s.session_id not in repeated:
            out.append(s)
            continue
        repeats = by_item.pop(s.item_id, None)
        if repeats is None:  # the item's majority is already in place
            continue
        decision = majority([r.decision for r in repeats])
        if decision is None:
            out.append(replace(repeats[0], decision=None, **no_verdict))  # type: ignore[type-var]
        else:
            out.append(next(r for r in repeats if r.decision == decision))
    return out
