"""The certificate of one run: what ``voirdire report`` prints as its certificate section, ``--json`` carries under
``"certificate"``, the viewer shows at ``/run/<file>/certificate`` and ``export-html`` puts in a whole-run page.

It gathers what the certificate knows of the run: the report's numbers with their intervals; the verdicts against
each source of truth the run has, each in its own section (``Source``) with its n and intervals: the protocol's
gold, named for what it is (the dataset's human judgments, gold answers by alias match), and people's labels from
the labels sidecar, with the prediction-powered estimate where those are a random sample; adding labels never
removes the gold's section; AUROC and the reliability of a score-carrying verdict; the per-configuration breakdown
and paired comparison where the transcript holds runs whose roles or parameters differ; the stability of repeats
(``--repeats N``: the report's own stability section); and the guarantees the protocol's paper gives each verdict.
Its charts (the confusion matrix, the intervals, the reliability diagram, the flip rate) are declared with the
reports' chart types and drawn by ``voirdire.analysis``, like every other chart.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from voirdire.base import HtmlDisplay
from voirdire.certificate.calibration import (
    PEOPLE_SOURCE,
    Calibration,
    CalibrationError,
    Run,
    RunReading,
    calibrate,
    fold_sessions,
    sessions_fold,
)
from voirdire.certificate.intervals import DEFAULT_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED, OFF, Interval
from voirdire.certificate.labels import LabelsError
from voirdire.certificate.people import Labels, sidecar_labels
from voirdire.reports import BarChart, Chart, Heatmap, IntervalChart, Line, LineChart, Report, Series

if TYPE_CHECKING:
    from voirdire.reports import Context, ReportFold
    from voirdire.transcript import SessionRecord


class GuaranteeCount(BaseModel):
    """Verdicts that carry one guarantee statement (``Verdict.guarantee``)."""

    kind: str
    statement: str
    source: str | None
    verdicts: int


class Source(BaseModel):
    """One source of truth and the verdicts against it: the protocol's gold, or people's labels."""

    name: str  # "gold answers, alias match", "the dataset's human judgments", "people's labels"
    kind: str  # "gold" or "people"
    calibration: Calibration | None
    why: str | None = None  # why there is no calibration against it
    small: str | None = None  # fewer than SMALL_N labelled items: said beside the numbers

    def text(self, *, limit: int = 10) -> list[str]:
        if self.calibration is None:
            return [f"  against {self.name}: none ({self.why})"]
        body = self.calibration.text(limit=limit).splitlines()[1:]  # its first line names the transcript again
        return [f"  against {self.name}:", *[f"  {x}" for x in body]]


class Certificate(HtmlDisplay, BaseModel):
    transcript: str
    protocol: str
    level: float | None  # None: intervals off (--ci 0)
    seed: int
    intervals: list[Interval]  # the report's numbers, with their intervals
    calibration: Calibration | None  # people's section where usable, else the gold's (as before ``sources``)
    no_calibration: str | None = None  # why the verdicts are not compared with any source
    sources: list[Source] = []  # every source of truth, each its own section: the gold first, then people's
    stability: dict[str, Any] | None = None  # the report's stability section (--repeats N)
    no_stability: str | None = None
    guarantees: list[GuaranteeCount] = []
    verdicts: int = 0  # verdicts in the run (the guarantees' denominator)
    notes: list[str] = []  # what the reader should know of how it was made (a labels file not used, and why)

    def text(self, *, limit: int = 10) -> str:
        """The section as ``voirdire report`` prints it after the report (whose intervals it does not repeat)."""
        lines = [f"certificate ({'intervals off' if self.level is None else f'{100 * self.level:g}%'}):"]
        lines += [f"  note: {x}" for x in self.notes]
        if not any(s.calibration is not None for s in self.sources):
            lines.append(f"  agreement with a source of truth: none ({self.no_calibration})")
        else:
            for source in self.sources:
                lines += source.text(limit=limit)
        if self.stability is None:
            lines.append(f"  stability: not measured ({self.no_stability})")
        else:
            lines.append("  stability: the report's stability section above")
        if self.guarantees:
            lines.append(f"  guarantees of the {self.verdicts} verdicts:")
            lines += [f"    {g.verdicts:>6} × {g.statement}" + (f" ({g.source})" if g.source else "")
                      for g in self.guarantees[:limit]]  # fmt: skip
            if len(self.guarantees) > limit:
                lines.append(f"    … {len(self.guarantees) - limit} more statements (--json for all)")
        else:
            lines.append("  guarantees: none recorded (the paper gives its verdicts none, or the run predates them)")
        return "\n".join(lines)

    def __repr__(self) -> str:
        names = ", ".join(s.name for s in self.sources if s.calibration is not None) or "no source of truth"
        return f"Certificate({self.transcript!r}, {self.protocol}, against {names})"

    def charts(self) -> list[Chart]:
        """The confusion matrix of each source, the intervals, the reliability diagram and the flip rate, where each
        has data."""
        out: list[Chart] = []
        c = self.calibration
        for k, source in enumerate(self.sources):
            if source.calibration is not None and source.calibration.agreement is not None:
                out.append(confusion_chart(source.calibration, f"-{k + 1}" if k else ""))
        rows = self.plotted_intervals()
        if rows:
            out.append(interval_chart(rows, self.level))
        if c is not None and c.scores is not None and c.scores.bins:
            out.append(reliability_chart(c))
        if self.stability is not None and self.stability.get("items"):
            out.append(stability_chart(self.stability))
        return out

    def plotted_intervals(self) -> list[Interval]:
        """The intervals on a scale of at most [-1, 1] (shares, κ, α, correlations, AUROC), with bounds."""
        found = list(self.intervals)
        c = self.calibration
        if c is not None and c.agreement is not None:
            a = c.agreement
            found += [a.accuracy, a.tpr, a.tnr, a.kappa, a.alpha]
        if c is not None and c.scores is not None:
            found.append(c.scores.auroc)
        if c is not None and c.estimate is not None:
            e = c.estimate
            found += [e.ppi.model_copy(update={"name": "share people accept · PPI"}),
                      e.classical.model_copy(update={"name": "share people accept · labels only"})]  # fmt: skip
        return [i for i in found if i.low is not None and i.high is not None and i.estimate is not None
                and -1 <= i.low <= i.high <= 1]  # fmt: skip


def confusion_chart(c: Calibration, suffix: str = "") -> Heatmap:
    m = c.agreement.confusion  # type: ignore[union-attr]
    total = max(m.tp + m.fp + m.fn + m.tn, 1)
    who = "gold" if c.kind == "gold" else "people"
    return Heatmap(
        f"certificate-confusion{suffix}", f"Verdicts against {c.name} ({total:,} sessions)", who, "verdict",
        ("verdict accepts", "verdict rejects"), (f"{who} accept", f"{who} reject"),
        ((m.tp / total, m.fp / total), (m.fn / total, m.tn / total)),
        caption=f"share of sessions; counts: {m.tp} both accept, {m.fp} only the verdict accepts, {m.fn} only "
        f"{who} accept, {m.tn} both reject (labels: {c.labels})",
    )  # fmt: skip


def interval_chart(rows: list[Interval], level: float | None) -> IntervalChart:
    shown = f"{100 * level:g}%" if level else ""
    return IntervalChart(
        "certificate-intervals", f"The run's numbers with their {shown} intervals".replace("  ", " "),
        "estimate", tuple(i.name for i in rows), tuple(float(i.estimate) for i in rows),  # type: ignore[arg-type]
        tuple(float(i.low) for i in rows), tuple(float(i.high) for i in rows),  # type: ignore[arg-type]
        caption="each interval's method, n and seed: voirdire report --json (certificate.intervals)",
    )  # fmt: skip


def reliability_chart(c: Calibration) -> LineChart:
    s = c.scores
    bins = s.bins  # type: ignore[union-attr]
    return LineChart(
        "certificate-reliability", f"Reliability of the verdicts' score ({s.statistic})",  # type: ignore[union-attr]
        "mean score of the bin", "share people accept",
        (Line("observed", tuple(b.mean_score for b in bins), tuple(b.accepted for b in bins)),
         Line("a calibrated score", (0.0, 1.0), (0.0, 1.0), style="dashed")),
        ylim=(0.0, 1.0),
        caption=f"{s.sessions:,} sessions in 10 bins of the score; AUROC {s.auroc.text()}",  # type: ignore[union-attr]
    )  # fmt: skip


def stability_chart(stability: Mapping[str, Any]) -> BarChart:
    items = stability["items"]
    decided = sum(1 for i in items if i.get("decided"))
    flips = sum(1 for i in items if i.get("flips"))
    return BarChart(
        "certificate-stability", f"Stability over {stability.get('repeats')} repeats of {len(items):,} items",
        "items", "items", ("decided", "undecided", "flip"),
        (Series("items", (float(decided), float(len(items) - decided), float(flips))),),
        caption=f"flip rate {_rate(stability)}",
    )  # fmt: skip


def _rate(stability: Mapping[str, Any]) -> str:
    rate, low, high = stability.get("flip_rate"), stability.get("flip_low"), stability.get("flip_high")
    if rate is None:
        return "undefined (no item has two verdicts)"
    bounds = f" [{100 * low:.1f}%, {100 * high:.1f}%]" if low is not None and high is not None else ""
    return f"{100 * rate:.1f}%{bounds}"


def report_intervals(report: Report | None) -> list[Interval]:
    """The report's numbers with their intervals (``Report.intervals``), as ``Interval``s."""
    if report is None:
        return []
    out = []
    for key, value in report.intervals.items():
        data = value.model_dump() if isinstance(value, BaseModel) else dict(value)
        out.append(Interval.model_validate({**data, "name": key}))
    return out


def _guarantee_of(s: SessionRecord) -> tuple[bool, tuple[str, str, str | None] | None]:
    """A session as ``guarantee_counts`` counts it: whether it has a verdict, and its verdict's guarantee."""
    v = s.verdict
    g = getattr(v, "guarantee", None) if v is not None else None
    return v is not None, (g.kind, g.statement, g.source) if g is not None else None


def guarantee_counts(path: str | Path) -> tuple[list[GuaranteeCount], int]:
    """Each guarantee statement with the number of verdicts that carry it, commonest first; and the verdicts. The
    file is streamed (``fold_sessions``), not loaded."""
    tally = GuaranteeTally()
    fold_sessions(path, _guarantee_of, tally.take)
    return tally.rows()


class GuaranteeTally:
    """``guarantee_counts``'s fold, for a pass that makes others from the same records."""

    def __init__(self) -> None:
        self.counts: Counter[tuple[str, str, str | None]] = Counter()
        self.verdicts = 0

    def fold(self) -> ReportFold[Any, Report]:
        return sessions_fold(_guarantee_of, self.take)

    def take(self, values: Sequence[tuple[bool, tuple[str, str, str | None] | None]], ctx: Context) -> None:
        self.counts, self.verdicts = Counter(), 0  # every session comes in this one call (a pass read again too)
        for has_verdict, guarantee in values:  # in session order: ties keep their first session's order
            self.verdicts += has_verdict
            if guarantee is not None:
                self.counts[guarantee] += 1

    def rows(self) -> tuple[list[GuaranteeCount], int]:
        counted = self.counts.most_common()
        rows = [GuaranteeCount(kind=k, statement=st, source=src, verdicts=n) for (k, st, src), n in counted]
        return rows, self.verdicts


class CertificateReading:
    """What a certificate reads from a transcript (its sessions' verdicts, ``read_run``; the guarantees they carry)
    as folds of one pass over the file, which can make the report too (``report_file``'s ``alongside``):
    ``voirdire report`` parses its transcript once, not once for the report and once for each of these."""

    def __init__(self, path: str | Path) -> None:
        self.path = path
        self.run = RunReading(path)  # a missing file: CalibrationError, as read_run says it
        self.guarantees = GuaranteeTally()

    def folds(self) -> list[ReportFold[Any, Report]]:
        return [self.run.fold(), self.guarantees.fold()]

    def read(self) -> None:
        """The pass alone, where no report is made with it (the report rows' gold read in it where needed)."""
        self.run.read(alongside=[self.guarantees.fold()])

    def certificate(
        self,
        report: Report | None = None,
        *,
        labels: Labels | None = None,
        level: float = DEFAULT_LEVEL,
        seed: int = DEFAULT_SEED,
        resamples: int = DEFAULT_RESAMPLES,
        gold_rows: dict[str, bool] | None = None,
        listed: int | None = None,
    ) -> Certificate:
        """``certificate_of`` from what the pass read; ``gold_rows``: the gold of the protocol's report rows where
        the caller made that report as ``report_gold`` would (else the file is read for them where needed);
        ``listed``: the disagreements each section keeps (None: all; a page lists a few, the rest counted)."""
        path = self.path
        run = self.run.run(gold_rows=gold_rows)
        notes = []
        if labels is None:
            try:
                labels = sidecar_labels(run, path)
            except LabelsError as exc:
                notes.append(f"the labels sidecar was not used: {exc}")
        sources = certificate_sources(run, labels, level=level, seed=seed, resamples=resamples, listed=listed)
        first = next((x for x in reversed(sources) if x.calibration is not None), None)
        stability = report.stability if report is not None else None
        guarantees, verdicts = self.guarantees.rows()
        return Certificate(
            transcript=str(path), protocol=run.protocol, level=level or None, seed=seed,
            intervals=[i for i in report_intervals(report) if i.reason != OFF],
            calibration=first.calibration if first is not None else None,
            no_calibration=None if first is not None else "; ".join(x.why or "" for x in sources),
            sources=sources,
            stability=json.loads(stability.model_dump_json()) if stability is not None else None,
            no_stability=None if stability is not None else "each item examined once: run with --repeats N",
            guarantees=guarantees, verdicts=verdicts, notes=notes,
        )  # fmt: skip


def certificate_of(
    path: str | Path,
    report: Report | None = None,
    *,
    labels: Labels | None = None,
    level: float = DEFAULT_LEVEL,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> Certificate:
    """The certificate of the transcript at ``path``; ``report``: its report (for the intervals and stability);
    ``labels``: people's labels as ``calibrate`` takes them (default: the labels sidecar's, where it holds usable
    ones, else the protocol's gold where it knows it). ``level`` 0: no intervals. The file is read in one pass
    (``CertificateReading``)."""
    reading = CertificateReading(path)
    reading.read()
    return reading.certificate(report, labels=labels, level=level, seed=seed, resamples=resamples)


def certificate_sources(
    run: Run, labels: Labels | None, *, level: float, seed: int, resamples: int, listed: int | None = None
) -> list[Source]:
    """Each source of truth of the run in its own section: the protocol's gold where it knows it, then the labels
    people gave (``labels``) where there are any. Neither replaces the other."""
    sources = []
    gold = run.gold_labels()
    if gold:
        sources.append(_source(run, (gold, f"{run.gold_name()} ({run.gold_statistic})", None), run.gold_name(),
                               "gold", level=level, seed=seed, resamples=resamples, listed=listed))  # fmt: skip
    if labels is not None:
        sources.append(_source(run, labels, PEOPLE_SOURCE, "people", level=level, seed=seed, resamples=resamples,
                               listed=listed))  # fmt: skip
    if not sources:
        why = (f"no gold label and no human label: voirdire calibrate {run.path} --sample 200 --seed 1 -o "
               "to_label.jsonl draws items to label")  # fmt: skip
        sources.append(Source(name=PEOPLE_SOURCE, kind="people", calibration=None, why=why))
    return sources


def _source(
    run: Run, labels: Labels, name: str, kind: str, *, level: float, seed: int, resamples: int, listed: int | None
) -> Source:
    table, source, how = labels
    try:
        c = calibrate(run, table, source=source, random_labels=how, level=level, seed=seed, resamples=resamples,
                      name=name, kind=kind, listed=listed)  # fmt: skip
    except CalibrationError as exc:
        return Source(name=name, kind=kind, calibration=None, why=str(exc))
    return Source(name=name, kind=kind, calibration=c, small=c.small)
