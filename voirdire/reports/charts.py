"""Charts as data: what a report can draw, declared without a plotting library.

A chart here is a small frozen description (bars, lines, a scatter, a heatmap) with its title and axis labels;
``voirdire.analysis`` draws it with matplotlib when that optional extra is installed. The core declares the charts
every transcript offers (``overview_charts``: verdicts with their gold agreement, tokens, latency and cost per role,
parse failures per prompt); a protocol declares its paper's charts with a ``ChartFold`` on its registration
(``Registration.charts``), so the core knows no protocol's chart by name. A ``ChartFold`` sees the transcript the way
a report does: one small value per session (``session``), then the values and the protocol's report (``charts``).
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from voirdire.reports.report import Report
from voirdire.reports.spool import map_values
from voirdire.transcript import ModelCall, SessionRecord, Verdict


@dataclass(frozen=True)
class Series:
    """One named set of values, one per category of a bar chart."""

    label: str
    values: tuple[float, ...]


@dataclass(frozen=True)
class BarChart:
    name: str
    title: str
    xlabel: str
    ylabel: str
    categories: tuple[str, ...]
    series: tuple[Series, ...]
    stacked: bool = False
    ylim: tuple[float, float] | None = None
    caption: str = ""
    n: tuple[int, ...] | None = None  # the count behind each category's value (a rate's denominator), shown on it


def plural(n: int, word: str, many: str = "") -> str:
    """``1 session``, ``2 sessions``; ``many``: the plural where it is not ``word + s``."""
    return f"{n:,} {word if n == 1 else many or word + 's'}"


LineStyle = Literal["line", "dashed", "dotted", "points", "faint"]


@dataclass(frozen=True)
class Line:
    label: str | None
    x: tuple[float, ...]
    y: tuple[float, ...]
    style: LineStyle = "line"


@dataclass(frozen=True)
class LineChart:
    name: str
    title: str
    xlabel: str
    ylabel: str
    lines: tuple[Line, ...]
    ylim: tuple[float, float] | None = None
    integer_x: bool = False
    caption: str = ""


@dataclass(frozen=True)
class ScatterChart:
    name: str
    title: str
    xlabel: str
    ylabel: str
    x: tuple[float, ...]
    y: tuple[float, ...]
    caption: str = ""


@dataclass(frozen=True)
class Heatmap:
    """``values[i][j]`` for row ``rows[i]`` and column ``columns[j]``; None where undefined."""

    name: str
    title: str
    xlabel: str
    ylabel: str
    rows: tuple[str, ...]
    columns: tuple[str, ...]
    values: tuple[tuple[float | None, ...], ...]
    vmin: float = 0.0
    vmax: float = 1.0
    caption: str = ""


@dataclass(frozen=True)
class IntervalChart:
    """Estimates with their intervals, one row each (a forest plot): ``estimates[i]`` in ``[lows[i], highs[i]]``
    for the row named ``rows[i]``, drawn top to bottom in order."""

    name: str
    title: str
    xlabel: str
    rows: tuple[str, ...]
    estimates: tuple[float, ...]
    lows: tuple[float, ...]
    highs: tuple[float, ...]
    ylabel: str = ""
    caption: str = ""


Chart = BarChart | LineChart | ScatterChart | Heatmap | IntervalChart


def slug(text: str) -> str:
    """A chart's file name from its name: lower case, letters, digits and dashes."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "chart"


@dataclass(frozen=True)
class LeftOut:
    """A chart not drawn because it would show nothing, and why (one line)."""

    name: str
    reason: str


@dataclass(frozen=True)
class ChartFold:
    """A protocol's charts: ``session`` keeps a small value of one session (default: nothing), ``charts`` turns the
    values, in session order, and the protocol's report into charts."""

    charts: Callable[[Sequence[Any], Report], Sequence[Chart]]
    session: Callable[[SessionRecord], Any] = field(default=lambda s: None)
    left_out: Callable[[Sequence[Any], Report], Sequence[LeftOut]] = field(default=lambda values, report: ())
    """The charts it did not draw because they would show nothing, each with its one-line reason."""


# ----------------------------------------------------------------------------------- what every transcript offers


@dataclass(frozen=True)
class Overview:
    """What the overview charts keep of one session."""

    item_id: str | None
    decision: str | None
    accepted: bool | None
    correct: bool | None  # agrees with the gold label, where the verdict says
    latencies: tuple[tuple[str, float], ...]  # (role, seconds) of each model call a model answered
    title: str = ""  # the item's first shown field (its question, claim, sentence), for tables beside its id
    repeat: int | None = None  # which repeat of its item the session is (a run with --repeats); None: no repeats


TITLE_CHARS = 120  # an item's title is cut here in tables


def item_title(item: dict[str, Any], fields: Sequence[str] = ()) -> str:
    """The item's question or claim: the first field the display hints show that has a value, else its first short
    text; one line, cut at 120 characters."""
    keys = [k for k in fields if item.get(k) not in (None, "", [])] or [
        k for k, v in item.items() if k != "id" and isinstance(v, str) and v.strip()
    ]
    text = " ".join(str(item[keys[0]]).split()) if keys else ""
    return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1] + "…"


def overview(s: SessionRecord, gold: str = "", fields: Sequence[str] = ()) -> Overview:
    """What the overview keeps of a session; ``gold``: the verdict statistic that says whether the verdict agrees
    with the gold label, as the run header's display hints name it (``views.verdict.gold``; empty: none);
    ``fields``: the item fields the hints show (the first with a value is the item's title)."""
    v = next((e for e in reversed(s.events) if isinstance(e, Verdict)), None)
    correct = agrees_with_gold(v.statistics, gold) if v is not None else None
    latencies = tuple(
        (e.role, e.latency_s)
        for e in s.events
        if isinstance(e, ModelCall) and not e.cached and not getattr(e, "coalesced", False)
    )
    title = item_title(s.item or {}, fields)
    decision, accepted = (v.decision, v.accepted) if v else (None, None)
    return Overview(s.item_id, decision, accepted, correct, latencies, title, s.repeat)


def gold_labels(rows: Any) -> dict[str, bool]:
    """Item id -> its gold label, from a report's rows (``id``, a boolean ``gold``); other rows say nothing."""
    return {str(r["id"]): r["gold"] for r in rows or () if isinstance(r, dict) and isinstance(r.get("gold"), bool)}


def agrees_with_gold(
    statistics: Mapping[str, Any], gold: str = "", *, accepted: bool | None = None, label: bool | None = None
) -> bool | None:
    """The one rule for whether a verdict agrees with gold (report, viewer, export-html): the verdict's own
    boolean statistic that the display hints name (``gold``, ``views.verdict.gold``), else its ``accepted``
    against its item's gold ``label`` (``gold_labels``); None when neither says."""
    if gold and isinstance(statistics.get(gold), bool):
        return bool(statistics[gold])
    if accepted is not None and label is not None:
        return accepted == label
    return None


def gold_from_rows(report: Report, values: Sequence[Overview]) -> Sequence[Overview]:
    """Gold correctness from the report's rows (``id``, ``gold``) for verdicts that do not state it; lazily where
    ``values`` are read back from a spool (``map_values``), so a long run's overviews are never all in memory."""
    labels = gold_labels(getattr(report, "rows", None))

    def with_gold(v: Overview) -> Overview:
        if v.correct is None and v.item_id is not None:
            return replace(v, correct=agrees_with_gold({}, accepted=v.accepted, label=labels.get(str(v.item_id))))
        return v

    return map_values(values, with_gold)


def _percentile(xs: Sequence[float], q: float) -> float:
    ordered = sorted(xs)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


TOP_DECISIONS = 12  # the verdicts chart shows this many decisions, the rest as one bar "other (k decisions)"


def _verdicts(counts: dict[str, list[int]]) -> BarChart:
    """Sessions per decision (``counts``: decision -> [agree, disagree, no gold]), stacked by gold agreement; the
    most frequent decisions, the rest as one bar."""
    decided = sum(map(sum, counts.values()))
    order = sorted(counts, key=lambda d: (-sum(counts[d]), d))
    if len(order) > TOP_DECISIONS:  # thousands of free-text decisions: the top ones and the rest together
        rest = order[TOP_DECISIONS - 1 :]
        other = [sum(counts[d][i] for d in rest) for i in range(3)]
        order = order[: TOP_DECISIONS - 1]
        counts = {d: counts[d] for d in order}
        label = f"other ({plural(len(rest), 'decision')})"
        counts[label] = other
        order.append(label)
    known = sum(c[0] + c[1] for c in counts.values())
    if known:
        agree = sum(c[0] for c in counts.values())
        names = ("agrees with gold", "disagrees with gold", "no gold")
        series = tuple(Series(names[i], tuple(float(counts[d][i]) for d in order)) for i in range(3))
        series = tuple(s for s in series if any(s.values))
        rate = f"{agree}/{known} agree with gold ({100 * agree / known:.1f}%)"
        title = f"Verdicts of {plural(decided, 'session')}: {rate}"
    else:
        series = (Series("sessions", tuple(float(sum(counts[d])) for d in order)),)
        title = f"Verdicts of {plural(decided, 'session')} (no gold labels)"
    return BarChart("verdicts", title, "decision", "sessions", tuple(order), series, stacked=True)


def overview_charts(report: Report, values: Sequence[Overview], left_out: list[LeftOut] | None = None) -> list[Chart]:
    """The charts any transcript offers: verdicts (with gold agreement), tokens, latency and cost per role, parse
    failures per prompt. A chart with nothing to show is not drawn; ``left_out`` collects it with the reason."""
    skipped = left_out if left_out is not None else []
    charts: list[Chart] = []
    # One pass over the sessions (read back one at a time where spooled): decisions and latencies by role.
    counts: dict[str, list[int]] = {}  # decision -> [agree, disagree, no gold]
    latencies: dict[str, array[float]] = {}
    for v in values:
        if v.decision is not None:
            c = counts.setdefault(str(v.decision), [0, 0, 0])
            c[0 if v.correct is True else 1 if v.correct is False else 2] += 1
        for role, seconds in v.latencies:
            latencies.setdefault(role, array("d")).append(seconds)
    if counts:
        charts.append(_verdicts(counts))
    else:
        skipped.append(LeftOut("verdicts", "no session has a verdict yet"))
    roles = list(report.usage)
    total = report.total_usage
    if not (roles and total is not None and total.calls):
        skipped.append(LeftOut("tokens", "no model calls: every role was played by rules"))
    if roles and total is not None and total.calls:
        tokens = total.prompt_tokens + total.completion_tokens
        charts.append(
            BarChart(
                "tokens",
                f"Tokens per role ({tokens:,} in {plural(total.requests, 'request')})",
                "role",
                "tokens",
                tuple(roles),
                (
                    Series("prompt", tuple(float(report.usage[r].prompt_tokens) for r in roles)),
                    Series("completion", tuple(float(report.usage[r].completion_tokens) for r in roles)),
                ),
                stacked=True,
            )
        )
    if latencies:
        names = tuple(latencies)
        charts.append(
            BarChart(
                "latency",
                f"Model latency per role ({plural(sum(map(len, latencies.values())), 'call')})",
                "role",
                "seconds per call",
                names,
                (
                    Series("median", tuple(_percentile(latencies[r], 0.5) for r in names)),
                    Series("95th percentile", tuple(_percentile(latencies[r], 0.95) for r in names)),
                    Series("max", tuple(max(latencies[r]) for r in names)),
                ),
                n=tuple(len(latencies[r]) for r in names),
            )
        )
    # a run of free models (local, scripted, human) has no cost to draw; its title says so in the tokens chart
    if roles and total is not None and total.calls and total.cost_usd:
        priced = [r for r in roles if report.usage[r].cost_usd is not None]
        label = f"${total.cost_usd:.4f}" + (" at least (some models unpriced)" if total.cost_partial else "")
        charts.append(
            BarChart(
                "cost",
                f"Cost per role (total {label})",
                "role",
                "USD",
                tuple(priced),
                (Series("cost", tuple(float(report.usage[r].cost_usd or 0.0) for r in priced)),),
            )
        )
    keys = sorted(report.replies)
    failed = sum(report.parse_failures.get(k, 0) for k in keys)
    replies = sum(report.replies[k] for k in keys)
    if keys and not failed:
        skipped.append(LeftOut("parse-failures", f"no parse failures: all {plural(replies, 'reply', 'replies')} read"))
    elif not keys:
        skipped.append(LeftOut("parse-failures", "no model replies to read"))
    if keys and failed:
        charts.append(
            BarChart(
                "parse-failures",
                f"Parse failures per prompt ({failed:,} of {plural(replies, 'reply', 'replies')})",
                "role · prompt",
                "replies unreadable (%)",
                tuple(keys),
                (
                    Series(
                        "failure rate", tuple(100 * report.parse_failures.get(k, 0) / report.replies[k] for k in keys)
                    ),
                ),
                ylim=(0, 100),
                n=tuple(report.replies[k] for k in keys),
            )
        )
    return charts
