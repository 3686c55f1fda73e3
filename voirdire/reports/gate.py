"""``report --fail-under METRIC=VALUE``: a report as a CI gate. Each threshold names a number of the report or its
certificate (accuracy, F1, κ, ...), or the lower end of its interval (``METRIC.low``); the command fails (exit
status 1) when one is below its threshold, printing which.

A metric is found by name among the report's and the certificate's numbers: the intervals by what the report prints
them as (``reject incorrect · F1``, ``claims correct``) and by their own names (``precision``, ``kappa``), and the
plain numbers by their JSON path (``reject_incorrect.f1``). Names are compared in lower case with punctuation and
``·`` read as spaces, κ as kappa and α as alpha; a name that ends one metric's name only (``F1`` where one F1 is
reported) finds it. A name that finds none, or several, is an error that lists them (exit status 2). A threshold
against a number that could not be computed (an interval with a reason instead of ends) fails: the gate cannot be
shown to hold.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from voirdire.base import VoirdireError


class GateError(VoirdireError, ValueError):
    """A threshold that cannot be checked: its text, or a metric name that finds no number or several."""


@dataclass(frozen=True)
class Threshold:
    metric: str
    low: bool  # METRIC.low: the lower end of its interval
    value: float
    text: str

    @classmethod
    def parse(cls, text: str) -> Threshold:
        """``METRIC=VALUE``: VALUE a number (0.8) or a percentage (80%, read as 0.8)."""
        metric, sep, raw = text.rpartition("=")
        metric = metric.strip()
        if not sep or not metric:
            raise GateError(f"--fail-under {text!r}: expected METRIC=VALUE, such as accuracy=0.8 or F1.low=0.7")
        raw = raw.strip()
        try:
            value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
        except ValueError:
            raise GateError(f"--fail-under {text!r}: {raw!r} is not a number (0.8, or 80%)") from None
        if not math.isfinite(value):
            raise GateError(f"--fail-under {text!r}: the threshold must be a finite number")
        low = metric.lower().endswith(".low")
        return cls(metric=metric[: -len(".low")] if low else metric, low=low, value=value, text=text)


@dataclass(frozen=True)
class Metric:
    """One number a threshold may name: its names, its value, and its interval's lower end (None: none)."""

    label: str
    names: tuple[str, ...]
    value: float | None
    low: float | None
    interval: bool
    reason: str | None = None


def _norm(name: str) -> str:
    name = name.lower().replace("κ", "kappa").replace("α", "alpha")
    return " ".join(re.findall(r"[a-z0-9]+", name))


def _is_interval(node: Mapping[str, Any]) -> bool:
    return "estimate" in node and "method" in node and "low" in node


def _number(x: Any) -> float | None:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) else None


def metrics(tree: Any, path: tuple[str, ...] = ()) -> Iterator[Metric]:
    """Every number of a report's (or certificate's) JSON: its intervals and its plain numbers."""
    if isinstance(tree, Mapping):
        if _is_interval(tree):
            names = tuple(n for n in (".".join(path), path[-1] if path else "", str(tree.get("name") or "")) if n)
            yield Metric(
                label=path[-1] if path else str(tree.get("name")),
                names=names,
                value=_number(tree.get("estimate")),
                low=_number(tree.get("low")),
                interval=True,
                reason=tree.get("reason"),
            )
            return
        for key, value in tree.items():
            if key in ("rows", "disagreements"):  # per-session rows: not the report's numbers
                continue
            yield from metrics(value, (*path, str(key)))
    elif isinstance(tree, list):
        for i, value in enumerate(tree):
            # a list of intervals (the certificate's) is named by each interval's own name
            name = value.get("name") if isinstance(value, Mapping) and _is_interval(value) else str(i)
            yield from metrics(value, (*path, str(name)))
    elif (x := _number(tree)) is not None and path:
        yield Metric(label=".".join(path), names=(".".join(path), path[-1]), value=x, low=None, interval=False)


def find(threshold: Threshold, found: Sequence[Metric]) -> Metric:
    """The one metric ``threshold`` names: exact names first, then names it ends; intervals before plain numbers
    (a report's F1 is both a field and an interval's estimate)."""
    want = _norm(threshold.metric)
    for match in (
        lambda n: n == want,
        lambda n: n.endswith(" " + want),
    ):
        hits = [m for m in found if any(match(_norm(n)) for n in m.names)]
        if threshold.low:
            hits = [m for m in hits if m.interval]
        if len({m.label for m in hits if m.interval}) == 1:
            return next(m for m in hits if m.interval)
        if len({m.label for m in hits}) == 1:
            return hits[0]
        if hits:
            labels = ", ".join(sorted({m.label for m in hits}))
            raise GateError(f"--fail-under {threshold.text!r}: {threshold.metric!r} names several numbers ({labels}); "
                            "name one of them")  # fmt: skip
    known = ", ".join(sorted({m.label for m in found if m.interval})) or "none"
    raise GateError(
        f"--fail-under {threshold.text!r}: no number named {threshold.metric!r} in this report; its intervals: {known}"
    )


@dataclass(frozen=True)
class Check:
    threshold: Threshold
    metric: Metric
    value: float | None

    @property
    def passed(self) -> bool:
        return self.value is not None and self.value >= self.threshold.value

    def text(self) -> str:
        what = f"{self.metric.label}{' (interval low)' if self.threshold.low else ''}"
        if self.value is None:
            why = f": {self.metric.reason}" if self.metric.reason else ""
            return f"{what} has no value{why}; threshold {self.threshold.value:g}"
        relation = "at least" if self.passed else "below"
        return f"{what} = {self.value:.4g}, {relation} {self.threshold.value:g}"


def check_thresholds(thresholds: Sequence[Threshold], *trees: Any) -> list[Check]:
    """Each threshold against the numbers of ``trees`` (the report's JSON, the certificate's)."""
    found = [m for tree in trees for m in metrics(tree)]
    out = []
    for t in thresholds:
        m = find(t, found)
        out.append(Check(t, m, m.low if t.low else m.value))
    return out
