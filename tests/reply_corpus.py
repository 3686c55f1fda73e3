"""The check every labelled reply corpus shares: no flips, no over-reads, accuracy floors per reader and category.

A flip is a reading that differs from the label when neither is a refusal; an over-read is a value taken from a
reply labelled "refuse".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def check_corpus(
    rows: Iterable[dict[str, Any]],
    read: Callable[[dict[str, Any]], Any],
    min_accuracy: Mapping[str, float],
    min_category_accuracy: float,
    category_floors: Mapping[tuple[str, str], float] | None = None,
) -> None:
    """``category_floors`` sets another floor for a (reader, category): one whose replies the reader refuses by
    design (refusals are never flips)."""
    totals: Counter[str] = Counter()
    per_category: Counter[tuple[str, str, str]] = Counter()
    flips, over_reads = [], []
    for r in rows:
        got = read(r)
        ok = got == r["label"]
        totals[r["reader"]] += 1
        totals[r["reader"] + ":ok"] += ok
        per_category[(r["reader"], r["category"], "n")] += 1
        per_category[(r["reader"], r["category"], "ok")] += ok
        if "refuse" not in (r["label"], got) and not ok:
            flips.append((r["id"], r["label"], got, r["text"][:120]))
        if r["label"] == "refuse" and got != "refuse":
            over_reads.append((r["id"], got, r["text"][:120]))
    assert flips == []
    assert over_reads == []
    for reader, floor in min_accuracy.items():
        assert totals[reader + ":ok"] / totals[reader] >= floor, reader
    low = {
        (reader, cat): per_category[(reader, cat, "ok")] / n
        for (reader, cat, kind), n in per_category.items()
        if kind == "n"
        and per_category[(reader, cat, "ok")] / n < (category_floors or {}).get((reader, cat), min_category_accuracy)
    }
    assert low == {}
