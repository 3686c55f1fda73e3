"""Runs compared item by item: ``voirdire compare RUN_A RUN_B ...`` and the viewer's comparison page.

Two or more transcripts over the same items (matched by item id) are read as their reports read them (the attempt
that counts of each session); for every item the verdict of each run, and for every pair of runs the share of
shared items on which their verdicts agree and Cohen's κ (scikit-learn), which discounts the agreement two runs
would reach by chance given how often each gives each verdict. Gold agreement per run is read as the viewer reads
it: the verdict statistic the run header's display hints name (``views.verdict.gold``), or the protocol report's
rows (``id``, ``gold``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, computed_field

from voirdire.base import HtmlDisplay, VoirdireError
from voirdire.reports import BarChart, Chart, Heatmap, Overview, Report, ReportFold, Series, cohen_kappa, majority

By = Literal["decision", "accepted"]


class CompareError(VoirdireError, ValueError):
    """Runs that cannot be compared; the message names the file."""


class RunSide(BaseModel):
    label: str
    path: str
    protocol: str
    sessions: int
    verdicts: int
    gold_known: int = 0
    gold_agree: int = 0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def gold_rate(self) -> float | None:
        return self.gold_agree / self.gold_known if self.gold_known else None


class Row(BaseModel):
    item_id: str
    title: str = ""  # the item's question or claim, as the first run's display hints show it
    verdicts: list[str | None]
    correct: list[bool | None]
    agree: bool | None  # every run gave a verdict and they are all equal; None when some run gave none


class Pair(BaseModel):
    a: int
    b: int
    n: int  # shared items where both gave a verdict
    agreement: float | None
    kappa: float | None


class Comparison(HtmlDisplay, BaseModel):
    by: By
    runs: list[RunSide]
    rows: list[Row]
    pairs: list[Pair]
    only_in: list[int]  # per run: items no other run has

    @computed_field  # type: ignore[prop-decorator]
    @property
    def disagreements(self) -> int:
        return sum(r.agree is False for r in self.rows)

    def pair(self, a: int, b: int) -> Pair | None:
        return next((p for p in self.pairs if {p.a, p.b} == {a, b}), None)

    def text(self, *, disagree_only: bool = False, limit: int = 50) -> str:
        n = len(self.rows)
        lines = [f"{n} item{'s' if n != 1 else ''} shared by {len(self.runs)} runs (verdicts compared by {self.by})"]
        for i, run in enumerate(self.runs):
            gold = (
                f"{run.gold_agree}/{run.gold_known} agree with gold ({100 * (run.gold_rate or 0):.1f}%)"
                if run.gold_known
                else "no gold labels"
            )
            lines.append(
                f"  [{i + 1}] {run.label}: {run.protocol}, {run.verdicts}/{run.sessions} verdicts, {gold}"
                + (f", {self.only_in[i]} items only here" if self.only_in[i] else "")
            )
        for p in self.pairs:
            agreement = "–" if p.agreement is None else f"{100 * p.agreement:.1f}%"
            kappa = "undefined" if p.kappa is None else f"{p.kappa:.3f}"
            items = f"{p.n} item{'s' if p.n != 1 else ''}"
            lines.append(f"  [{p.a + 1}] vs [{p.b + 1}]: agreement {agreement} on {items}, Cohen's κ {kappa}")
        shown = [r for r in self.rows if r.agree is False] if disagree_only else self.rows
        lines.append(f"{'disagreements' if disagree_only else 'items'} ({len(shown)}; {self.disagreements} disagree):")
        width = min(max([len(r.item_id) for r in shown[:limit]] + [4]), 40)
        for r in shown[:limit]:
            cells = "  ".join(_cell(v, c) for v, c in zip(r.verdicts, r.correct, strict=True))
            mark = "≠" if r.agree is False else " "
            lines.append(f"  {mark} {r.item_id[:width]:<{width}}  {cells}")
            if r.title and r.title != r.item_id:  # the item's question or claim, under its id
                lines.append(f"    {' ' * width}  {r.title if len(r.title) <= 72 else r.title[:71] + '…'}")
        if len(shown) > limit:
            lines.append(f"  … {len(shown) - limit} more (--json for all)")
        return "\n".join(lines)


def run_labels(paths: Sequence[str | Path]) -> list[str]:
    """Each run's file name; with its folder where two runs share a name (``a/t.jsonl``, ``b/t.jsonl``)."""
    names = [Path(p).name for p in paths]
    pairs = zip(paths, names, strict=True)
    return [f"{Path(p).resolve().parent.name}/{n}" if names.count(n) > 1 else n for p, n in pairs]


def _cell(verdict: str | None, correct: bool | None) -> str:
    mark = "" if correct is None else " ✓" if correct else " ✗"
    return f"{verdict or '–'}{mark}"


def compared_run(
    path: str | Path, label: str, *, alongside: Sequence[ReportFold[Any, Any]] = ()
) -> tuple[RunOverviews, Report]:
    """One run as compared, read in one pass over its file (with any folds ``alongside``): each session's verdict
    and gold correctness, and the protocol's report (no intervals: the comparison shows none of it)."""
    from voirdire.analysis.drawing import transcript_overview

    if not Path(path).is_file():
        raise CompareError(f"{path}: no such transcript")
    report, values = transcript_overview(path, ci=0, alongside=alongside)
    return RunOverviews(label, str(path), report.protocol, report.sessions, values), report


def _label(v: Overview, by: By) -> str | None:
    if v.decision is None:
        return None
    if by == "accepted":
        return None if v.accepted is None else "accepted" if v.accepted else "rejected"
    return v.decision


def kappa(a: Sequence[str], b: Sequence[str]) -> float | None:
    """Cohen's κ of two runs' verdicts (the reports' one κ, ``cohen_kappa``); None where it is undefined: no
    shared items, or one label everywhere (chance agreement is then 1)."""
    if not a or len(set(a) | set(b)) == 1:
        return None
    k = cohen_kappa(a, b)
    return None if math.isnan(k) else k


@dataclass(frozen=True)
class RunOverviews:
    """One run as compared: its label, file, protocol, session count and each session's overview."""

    label: str
    path: str
    protocol: str
    sessions: int
    values: Sequence[Overview]


def compare(paths: Sequence[str | Path], *, by: By = "decision", labels: Sequence[str] | None = None) -> Comparison:
    if len(paths) < 2:
        raise CompareError("compare: give two or more transcripts")
    names = labels or run_labels(paths)
    return compare_runs([compared_run(path, names[i])[0] for i, path in enumerate(paths)], by=by)


def by_item(run: RunOverviews) -> dict[str, Overview]:
    """The run's sessions by item id; two sessions of one item id are an error (runs are matched by item id, and
    merging them would compare one of the two at random), unless they are repeats of the item (``--repeats``),
    which stand for it as one by their majority verdict (``repeated_item``)."""
    found: dict[str, Overview] = {}
    shared: dict[str, int] = {}
    repeats: dict[str, list[Overview]] = {}
    for v in run.values:
        if v.item_id is None:
            continue
        item = str(v.item_id)
        if v.repeat is not None:
            repeats.setdefault(item, []).append(v)
            continue
        if item in found:
            shared[item] = shared.get(item, 1) + 1
        found[item] = v
    for item, values in repeats.items():
        if item in found:  # repeats beside a session of its own: which one stands for the item is not known
            shared[item] = shared.get(item, 1) + len(values)
        found[item] = repeated_item(values)
    order = dict.fromkeys(str(v.item_id) for v in run.values if v.item_id is not None)
    found = {item: found[item] for item in order}  # in the order the items first appear, repeated or not
    if shared:
        first = next(iter(shared))
        more = f" (and {len(shared) - 1} more item ids)" if len(shared) > 1 else ""
        raise CompareError(
            f"{run.path}: {shared[first]} sessions share item id {first!r}{more}; runs are compared item by item, "
            "so each item needs an id of its own"
        )
    return found


def repeated_item(values: Sequence[Overview]) -> Overview:
    """An item's repeats as one: their majority decision (``voirdire.reports.majority``; none on a tie), with the
    accept/reject and gold agreement of the first repeat that gave it."""
    decision = majority([v.decision for v in values])
    chosen = next((v for v in values if v.decision == decision), values[0]) if decision is not None else values[0]
    if decision is None:
        return Overview(chosen.item_id, None, None, None, (), chosen.title, None)
    return Overview(chosen.item_id, decision, chosen.accepted, chosen.correct, (), chosen.title, None)


def compare_runs(runs: Sequence[RunOverviews], *, by: By = "decision") -> Comparison:
    """Runs already read (``compare`` reads transcripts; the viewer its indexes) compared item by item."""
    if len(runs) < 2:
        raise CompareError("compare: give two or more transcripts")
    sides: list[RunSide] = []
    verdicts: list[dict[str, Overview]] = []
    for run in runs:
        items = by_item(run)
        known = [v for v in items.values() if v.correct is not None]
        sides.append(
            RunSide(
                label=run.label, path=run.path, protocol=run.protocol, sessions=run.sessions,
                verdicts=sum(v.decision is not None for v in items.values()),
                gold_known=len(known), gold_agree=sum(bool(v.correct) for v in known),
            )
        )  # fmt: skip
        verdicts.append(items)
    shared = [item for item in verdicts[0] if all(item in other for other in verdicts[1:])]
    if not shared:
        raise CompareError(f"{runs[0].path} and {runs[1].path}: no item in common (runs are matched by item id)")
    rows = []
    for item in shared:
        labelled = [_label(run[item], by) for run in verdicts]
        agree = None if None in labelled else len(set(labelled)) == 1
        correct = [run[item].correct for run in verdicts]
        title = next((run[item].title for run in verdicts if run[item].title), "")
        rows.append(Row(item_id=item, title=title, verdicts=labelled, correct=correct, agree=agree))
    pairs = []
    for a in range(len(runs)):
        for b in range(a + 1, len(runs)):
            both = [
                (r.verdicts[a], r.verdicts[b]) for r in rows if r.verdicts[a] is not None and r.verdicts[b] is not None
            ]
            xs, ys = [x for x, _ in both], [y for _, y in both]
            agreement = sum(x == y for x, y in both) / len(both) if both else None
            pairs.append(Pair(a=a, b=b, n=len(both), agreement=agreement, kappa=kappa(xs, ys)))  # type: ignore[arg-type]
    common = set(shared)
    only = [len(set(run) - common) for run in verdicts]
    return Comparison(by=by, runs=sides, rows=rows, pairs=pairs, only_in=only)


def comparison_charts(c: Comparison) -> list[Chart]:
    """The agreement matrix and Cohen's κ between every two runs as heatmaps, and each run's gold agreement."""
    names = tuple(f"[{i + 1}] {r.label}"[:28] for i, r in enumerate(c.runs))
    n = len(c.runs)

    def matrix(get: str) -> tuple[tuple[float | None, ...], ...]:
        grid: list[list[float | None]] = [[1.0 if i == j else None for j in range(n)] for i in range(n)]
        for p in c.pairs:
            v = getattr(p, get)
            grid[p.a][p.b] = grid[p.b][p.a] = v
        return tuple(tuple(row) for row in grid)

    charts: list[Chart] = [
        Heatmap("agreement", f"Agreement between runs ({len(c.rows)} shared items, by {c.by})", "run", "run",
                names, names, matrix("agreement")),
        Heatmap("kappa", "Cohen's κ between runs", "run", "run", names, names, matrix("kappa"), vmin=-1.0),
    ]  # fmt: skip
    gold = [(name, r) for name, r in zip(names, c.runs, strict=True) if r.gold_known]
    if gold:
        charts.append(
            BarChart("gold-agreement", "Verdicts that agree with gold, per run", "run", "agree with gold (%)",
                     tuple(name for name, _ in gold),
                     (Series("agree with gold", tuple(100 * (r.gold_rate or 0.0) for _, r in gold)),), ylim=(0, 100))
        )  # fmt: skip
    return charts
