"""How stable a run's verdicts are over repeats (``--repeats N``): every report's stability section.

A run with repeats examines each item N times (sessions ``ITEM@r1`` ... ``ITEM@rN``). Per item, the verdicts of
its repeats are counted; the item is *decided* when one verdict holds at least ``decided_at`` of them (by default
0.8: 4 of 5 repeats), and *undecided* otherwise (a tie between the two commonest verdicts is never decided). An
item *flips* when its repeats' verdicts are not all the same. The run's flip rate is the share of items that flip,
among the items with at least two verdicts, with a Wilson interval (scipy ``binomtest(...).proportion_ci``, the
method ``voirdire.certificate.wilson`` uses; the certificate sits above the reports and cannot be imported here).
The items are the unit: repeats of one item are not independent observations of the rate.

Repeats are read as one item, by their majority verdict, by ``voirdire compare`` and ``voirdire calibrate``
(``majority``).
"""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, Field, computed_field

DEFAULT_DECIDED_AT = 0.8
"""The share of an item's repeats one verdict must hold for the item to be decided, unless ``--decided-at`` says
otherwise: 4 of 5 repeats, 8 of 10."""

NO_VERDICT = "(no verdict)"  # how a repeat that ended without a verdict (an error) is counted


class ItemStability(BaseModel):
    """One item's repeats: how many gave each verdict, its majority and whether it is decided or flips."""

    item_id: str
    sessions: list[str] = Field(description="its repeats' session ids, in the order they appear")
    verdicts: dict[str, int] = Field(description="decision -> repeats that gave it (no verdict: '(no verdict)')")
    majority: str | None = Field(description="the commonest decision; None on a tie or with no verdict")
    share: float | None = Field(description="the majority's share of the repeats with a verdict")
    decided: bool
    flips: bool = Field(description="its repeats' verdicts are not all the same")
    first: dict[str, str] = Field(description="decision -> the first session that gave it (to open its chat)")

    @property
    def judged(self) -> int:
        """Repeats with a verdict."""
        return sum(n for d, n in self.verdicts.items() if d != NO_VERDICT)


class Stability(BaseModel):
    """The stability section of a report of a run with repeats."""

    decided_at: float
    repeats: int = Field(description="the most repeats of one item")
    items: list[ItemStability]
    assessed: int = Field(description="items with at least two verdicts, on which the flip rate rests")
    flipping: int
    flip_rate: float | None
    flip_low: float | None = None
    flip_high: float | None = None
    level: float | None = Field(None, description="the Wilson interval's level; None: intervals off (--ci 0)")
    transcript: str | None = None
    planned: int | None = Field(
        None, description="sequential repeats (--stop-when-decided): the repeats each item could have used"
    )
    stopped_at: float | None = Field(
        None, description="sequential repeats: the --decided-at share at which an item's repeats stopped"
    )

    @computed_field  # type: ignore[prop-decorator]
    @property
    def undecided_items(self) -> list[str]:
        """The undecided items' ids."""
        return [i.item_id for i in self.undecided()]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def flipping_items(self) -> list[dict[str, Any]]:
        """Each item that flips: its id, verdict counts, whether it is decided, and per verdict the command that
        opens the first repeat that gave it."""
        return [
            {"item_id": i.item_id, "verdicts": i.verdicts, "decided": i.decided,
             "commands": {d: self.command(sid) for d, sid in i.first.items()}}
            for i in self.flipped()
        ]  # fmt: skip

    def undecided(self) -> list[ItemStability]:
        return [i for i in self.items if i.judged >= 2 and not i.decided]

    def flipped(self) -> list[ItemStability]:
        return [i for i in self.items if i.flips]

    def command(self, session_id: str) -> str:
        """The command that opens a session's chat."""
        return f"voirdire show {shlex.quote(self.transcript or 'TRANSCRIPT')} --session {shlex.quote(session_id)}"

    def rate_text(self) -> str:
        if self.flip_rate is None:
            return "undefined (no item has two verdicts)"
        rate = f"{100 * self.flip_rate:.1f}%"
        if self.level is None or self.flip_low is None or self.flip_high is None:
            return rate
        bounds = f"[{100 * self.flip_low:.1f}%, {100 * self.flip_high:.1f}%]"
        return f"{rate} {bounds} ({100 * self.level:g}% Wilson, n={self.assessed})"

    def stopping_text(self) -> str | None:
        """Sequential repeats: the stopping rule and the repeats the items used."""
        if self.planned is None or self.stopped_at is None:
            return None
        used = [len(i.sessions) for i in self.items]
        mean = sum(used) / len(used) if used else 0.0
        return (
            f"  sequential repeats (--stop-when-decided): an item's repeats stopped once its status at "
            f"{100 * self.stopped_at:g}% could no longer change; repeats used {sum(used):,} of "
            f"{self.planned * len(used):,} (mean {mean:.2f} of {self.planned}, {min(used, default=0)} to "
            f"{max(used, default=0)}); the flip rate is over the repeats that ran"
        )

    def lines(self, *, limit: int = 20) -> list[str]:
        """The section as the report prints it: the flip rate, decided and undecided counts, the items that flip
        (each verdict with the command that opens the first repeat that gave it)."""
        undecided = self.undecided()
        lines = [
            f"stability over {self.repeats} repeats of {_n(len(self.items), 'item')} (decided: one verdict in at least "
            f"{100 * self.decided_at:g}% of an item's repeats, --decided-at):",
            f"  flip rate {self.rate_text()}: the repeats of {self.flipping} of {_n(self.assessed, 'item')} do not all "
            "agree",
            f"  decided {self.assessed - len(undecided)}, undecided {len(undecided)}"
            + (f", {len(self.items) - self.assessed} with fewer than 2 verdicts" if self.assessed < len(self.items)
               else ""),
        ]  # fmt: skip
        if (stopping := self.stopping_text()) is not None:
            lines.append(stopping)
        steady = Counter(
            f"{d} ×{n}" for i in self.items if not i.flips for d, n in i.verdicts.items() if d != NO_VERDICT
        )
        if steady:
            kinds = ", ".join(f"{pattern}: {count}" for pattern, count in steady.most_common())
            lines.append(f"  items whose repeats all agree: {sum(steady.values())} ({kinds})")
        flipped = self.flipped()
        if flipped:
            lines.append(f"  items that flip ({len(flipped)}):")
        for item in flipped[:limit]:
            counts = ", ".join(f"{d} {n}" for d, n in item.verdicts.items())
            status = "decided" if item.decided else "undecided"
            lines.append(f"    {item.item_id}: {counts} ({status})")
            lines += [f"      {self.command(sid)}  # {d}" for d, sid in item.first.items()]
        if len(flipped) > limit:
            lines.append(f"    … {len(flipped) - limit} more (--json for all)")
        return lines


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def item_stability(item_id: str, repeats: Sequence[tuple[str, str | None]], decided_at: float) -> ItemStability:
    """One item from its repeats' (session id, decision or None), in order."""
    counts: Counter[str] = Counter(d if d is not None else NO_VERDICT for _, d in repeats)
    first: dict[str, str] = {}
    for sid, d in repeats:
        first.setdefault(d if d is not None else NO_VERDICT, sid)
    given = Counter({d: n for d, n in counts.items() if d != NO_VERDICT})
    ranked = given.most_common(2)
    judged = sum(given.values())
    tie = len(ranked) == 2 and ranked[0][1] == ranked[1][1]
    majority = ranked[0][0] if ranked and not tie else None
    share = ranked[0][1] / judged if ranked else None
    decided = majority is not None and share is not None and share >= decided_at
    return ItemStability(
        item_id=item_id,
        sessions=[sid for sid, _ in repeats],
        verdicts=dict(counts.most_common()),
        majority=majority,
        share=share,
        decided=decided,
        flips=len(given) > 1,
        first=first,
    )


def stability(
    sessions: Iterable[tuple[Any, ...]],
    *,
    decided_at: float = DEFAULT_DECIDED_AT,
    level: float | None = 0.95,
    transcript: str | None = None,
) -> Stability | None:
    """The section from the repeated sessions' (session id, item id, decision or None[, (repeats planned, share
    they stopped at)]), in transcript order; None when no item has two repeats. ``level``: the flip rate's Wilson
    interval (None or 0: none)."""
    check_decided_at(decided_at)
    by_item: dict[str, list[tuple[str, str | None]]] = {}
    rule: tuple[Any, Any] | None = None
    for sid, item_id, decision, *more in sessions:
        by_item.setdefault(item_id, []).append((sid, decision))
        if more and more[0] is not None:
            rule = more[0]
    if not any(len(r) > 1 for r in by_item.values()):
        return None
    items = [item_stability(i, r, decided_at) for i, r in by_item.items()]
    assessed = [i for i in items if i.judged >= 2]
    flipping = sum(i.flips for i in assessed)
    out = Stability(
        decided_at=decided_at,
        repeats=max(len(r) for r in by_item.values()),
        items=items,
        assessed=len(assessed),
        flipping=flipping,
        flip_rate=flipping / len(assessed) if assessed else None,
        transcript=transcript,
    )
    if rule is not None:
        out.planned, out.stopped_at = int(rule[0]), float(rule[1])
    if level and assessed:
        from scipy.stats import binomtest  # imported where the interval is computed

        ci = binomtest(flipping, len(assessed)).proportion_ci(confidence_level=level, method="wilson")
        out.flip_low, out.flip_high, out.level = float(ci.low), float(ci.high), level
    return out


def check_decided_at(value: float) -> None:
    """A majority level: above one half (a verdict held by half the repeats is not a majority), at most 1."""
    if not 0.5 < value <= 1:
        raise ValueError(f"decided_at must be above 0.5 and at most 1 (a majority's share), got {value}")


def majority(decisions: Sequence[str | None]) -> str | None:
    """The verdict a set of repeats stands for as one item (``compare``, ``calibrate``): the commonest decision
    among those given; None on a tie or when none was given."""
    ranked = Counter(d for d in decisions if d is not None).most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]
