"""Charts drawn with matplotlib (the optional extra ``voirdire[plots]``): SVG, or PNG on request.

``voirdire.reports.charts`` describes a chart; this module draws it, off screen (the Agg backend: nothing needs a
display). Text stays text in the SVG (``svg.fonttype = none``) and the file carries the chart's title as its
metadata, so a reader, a test or a search finds the title and the axis labels in it; the SVG is deterministic
(no date, a fixed id salt), so drawing the same chart twice gives the same bytes.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Iterable, Sequence
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from voirdire.base import VoirdireError, write_atomic
from voirdire.reports import (
    DEFAULT_CI,
    BarChart,
    Chart,
    ChartFold,
    Heatmap,
    IntervalChart,
    LeftOut,
    LineChart,
    Overview,
    Prices,
    Report,
    ReportFold,
    ScatterChart,
    generic_report,
    gold_from_rows,
    map_values,
    overview,
    overview_charts,
    report_file,
    slug,
)
from voirdire.transcript import RunHeader, SessionRecord

if TYPE_CHECKING:
    from matplotlib.figure import Figure

INSTALL = "pip install 'voirdire[plots]' (or: pip install matplotlib)"
FORMATS = ("svg", "png")
_STYLES: dict[str, dict[str, Any]] = {
    "line": {"linestyle": "-", "marker": "o", "markersize": 4, "linewidth": 2},
    "dashed": {"linestyle": "--", "linewidth": 1.5},
    "dotted": {"linestyle": ":", "linewidth": 1.5},
    "points": {"linestyle": "none", "marker": "D", "markersize": 6},
    "faint": {"linestyle": "-", "linewidth": 0.8, "alpha": 0.25, "color": "0.45"},
}
# One palette for every chart: the viewer's colours (voirdire/web/static/viewer.css), blue first.
PALETTE = ("#2f5fa7", "#d9822b", "#1d7a3a", "#8e3aa0", "#0f7480", "#b3261e", "#8a5a00", "#6b7075")
# Series whose meaning has a colour of its own, the same in every chart.
MEANINGS = {"agrees with gold": "#1d7a3a", "disagrees with gold": "#b3261e", "no gold": "#9aa0a6"}
# The one stylesheet of every chart: one font, quiet axes, a light grid behind the values.
STYLE: dict[str, Any] = {
    "svg.fonttype": "none",  # text stays text in the SVG
    "svg.hashsalt": "voirdire",  # the same ids every time: the same bytes for the same chart
    "text.parse_math": False,  # a "$" in a transcript's label (a cost, a model's words) is a dollar, not TeX
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
    "axes.titlelocation": "left",
    "axes.labelsize": 9,
    "axes.labelcolor": "#4a4f55",
    "axes.edgecolor": "#9aa0a6",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "axes.grid.axis": "y",
    "axes.axisbelow": True,
    "grid.color": "#e4e4de",
    "grid.linewidth": 0.8,
    "xtick.color": "#4a4f55",
    "ytick.color": "#4a4f55",
    "legend.fontsize": 8,
    "legend.frameon": False,
    "figure.facecolor": "white",
    "axes.facecolor": "white",
}
MAX_LABELLED_BARS = 40  # bars carry their value (and n) up to this many; more would be unreadable


class PlotsUnavailable(VoirdireError, ImportError):
    """matplotlib is not installed."""


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise PlotsUnavailable(f"charts need matplotlib, which is not installed: {INSTALL}") from None
    matplotlib.use("Agg", force=True)
    from cycler import cycler

    matplotlib.rcParams.update({**STYLE, "axes.prop_cycle": cycler(color=list(PALETTE))})
    import matplotlib.pyplot as plt

    return plt


def require() -> None:
    """Raises the one-line ``PlotsUnavailable`` when matplotlib is missing (before any work is done)."""
    _pyplot()


def available() -> bool:
    try:
        _pyplot()
    except PlotsUnavailable:
        return False
    return True


def figure(chart: Chart) -> Figure:
    """The chart as a matplotlib figure (the caller closes it)."""
    plt = _pyplot()
    wide = isinstance(chart, BarChart) and len(chart.categories) > 6
    fig, ax = plt.subplots(figsize=(8.0 if wide else 6.4, 4.2), layout="constrained")
    if isinstance(chart, BarChart):
        _bars(ax, chart)
    elif isinstance(chart, LineChart):
        _lines(ax, chart)
    elif isinstance(chart, ScatterChart):
        _scatter(ax, chart)
    elif isinstance(chart, Heatmap):
        _heatmap(fig, ax, chart)
        ax.grid(False)
    elif isinstance(chart, IntervalChart):
        _intervals(ax, chart)
    ax.set_title(chart.title)
    ax.set_xlabel(chart.xlabel)
    ax.set_ylabel(chart.ylabel)
    if chart.caption:
        fig.supxlabel(chart.caption, fontsize=7.5, color="#4a4f55", wrap=True)
    return fig


def _number(v: float) -> str:
    """A bar's value as it reads best: an integer as one, else 3 significant digits."""
    return f"{v:,.0f}" if float(v).is_integer() else f"{v:.3g}"


def _whole(chart: BarChart) -> bool:
    """Bars of counts: every value a whole number (the axis then has whole-number ticks only)."""
    return all(float(v).is_integer() for s in chart.series for v in s.values)


def _bars(ax: Any, chart: BarChart) -> None:
    from matplotlib.ticker import MaxNLocator

    n = len(chart.series)
    xs = range(len(chart.categories))
    bottom = [0.0] * len(chart.categories)
    width = 0.8 if chart.stacked or n <= 1 else 0.8 / n
    bars_n = len(chart.categories) * (1 if chart.stacked else n)
    labelled = bars_n <= MAX_LABELLED_BARS and _labels_fit(ax, chart, bars_n)
    colours = [MEANINGS.get(s.label, PALETTE[i % len(PALETTE)]) for i, s in enumerate(chart.series)]
    for i, s in enumerate(chart.series):
        if chart.stacked:
            bars = ax.bar(xs, s.values, width, bottom=bottom, label=s.label, color=colours[i])
            bottom = [b + v for b, v in zip(bottom, s.values, strict=True)]
            if labelled and n > 1:  # each part's value inside it, where it has one
                parts = [_number(v) if v else "" for v in s.values]
                ax.bar_label(bars, parts, label_type="center", fontsize=7.5, color="white")
        else:
            bars = ax.bar([x - 0.4 + width * (i + 0.5) for x in xs], s.values, width, label=s.label, color=colours[i])
            if labelled:  # a zero count reads from the axis; a zero rate keeps its label (and its n)
                texts = [_value_label(chart, v, j) if v or chart.n else "" for j, v in enumerate(s.values)]
                ax.bar_label(bars, texts, fontsize=7.5, padding=2)
    if chart.stacked and labelled:  # the total on top of each stack
        ax.bar_label(ax.containers[-1], [_value_label(chart, t, j) for j, t in enumerate(bottom)], fontsize=7.5,
                     padding=2)  # fmt: skip
    labels = [_short(c) for c in chart.categories]
    crowded = len(labels) > 4 or max(map(len, labels), default=0) > 14
    ax.set_xticks(list(xs), labels, rotation=25 if crowded else 0, ha="right" if crowded else "center")
    ax.margins(y=0.12)  # room for the values above the bars
    if _whole(chart):
        ax.yaxis.set_major_locator(MaxNLocator(integer=True, steps=[1, 2, 5, 10]))
    if chart.ylim:  # the axis's range, with room above it for the values; no tick beyond the range
        low, high = chart.ylim
        ax.set_ylim(low, high + (high - low) * (0.12 if labelled else 0))
        ticks = MaxNLocator(nbins=6, steps=[1, 2, 5, 10], integer=_whole(chart)).tick_values(low, high)
        ax.set_yticks([t for t in ticks if low <= t <= high])
    if n > 1:  # beside the plot, never over a bar
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))


def _labels_fit(ax: Any, chart: BarChart, bars: int) -> bool:
    """Whether each bar's label fits over its bar (about 5.2 points a character at 7.5 points, with room)."""
    axes = ax.figure.get_figwidth() * 72 * (0.7 if len(chart.series) > 1 else 0.85)  # a legend beside takes some
    width = axes * 0.8 / max(bars, 1)  # points a bar has: 80 % of its slot
    longest = max((len(line) for s in chart.series for j, v in enumerate(s.values)
                   for line in _value_label(chart, v, j).splitlines()), default=0)  # fmt: skip
    return longest * 5.2 <= width


def _value_label(chart: BarChart, value: float, j: int) -> str:
    """``12.5%`` or ``12.5 (n = 8)``: the bar's value, and the count behind it where the chart names one."""
    text = _number(value) + ("%" if chart.ylabel.endswith("(%)") else "")
    if chart.n is not None and j < len(chart.n):
        text += f"\nn = {chart.n[j]:,}"
    return text


def _scatter(ax: Any, chart: ScatterChart) -> None:
    """Points that pile up (many sessions, few distinct scores) are jittered a little (seeded: the same bytes every
    time) and drawn translucent, so a dense cloud shows its density."""
    import numpy as np

    x, y = np.asarray(chart.x, dtype=float), np.asarray(chart.y, dtype=float)
    n = len(x)
    rng = np.random.default_rng(0)
    for values in (x, y):
        distinct = len(np.unique(values))
        if n > 20 and distinct <= n / 4:  # discrete values shared by many points
            spread = (np.ptp(values) or 1.0) / max(distinct, 1) * 0.15
            values += rng.uniform(-spread, spread, n)
    alpha = float(min(0.8, max(0.15, 8 / np.sqrt(max(n, 1)))))
    ax.scatter(x, y, s=14, alpha=alpha, linewidths=0, color=PALETTE[0])
    ax.grid(True, axis="both")


def _short(label: str, most: int = 40) -> str:
    """A tick label a chart can hold (a decision or a role from a transcript can be any length)."""
    return label if len(label) <= most else label[: most - 1] + "…"


def _lines(ax: Any, chart: LineChart) -> None:
    labelled = False
    for line in chart.lines:
        ax.plot(line.x, line.y, label=line.label, **_STYLES[line.style])
        labelled = labelled or line.label is not None
    if chart.integer_x:
        ax.xaxis.get_major_locator().set_params(integer=True)
    if chart.ylim:
        ax.set_ylim(*chart.ylim)
    if labelled:
        ax.legend(loc="best")


def _heatmap(fig: Any, ax: Any, chart: Heatmap) -> None:
    import numpy as np

    grid = np.array([[np.nan if v is None else v for v in row] for row in chart.values], dtype=float)
    image = ax.imshow(grid, vmin=chart.vmin, vmax=chart.vmax, cmap="viridis")
    fig.colorbar(image, ax=ax)
    ax.set_xticks(range(len(chart.columns)), chart.columns, rotation=30, ha="right")
    ax.set_yticks(range(len(chart.rows)), chart.rows)
    for i, row in enumerate(chart.values):
        for j, v in enumerate(row):
            text = "–" if v is None else f"{v:.2f}"
            dark = v is not None and v > (chart.vmin + chart.vmax) / 2
            ax.text(j, i, text, ha="center", va="center", color="black" if dark else "white", fontsize=8)


def _intervals(ax: Any, chart: IntervalChart) -> None:
    """One row per estimate, its interval as a bar through it and the values written at its right."""
    ys = list(range(len(chart.rows)))
    # The interval as a bar of its own and the estimate as a dot: a bootstrap (BCa, percentile) interval need not
    # contain its estimate, which an error bar around the estimate could not show.
    ax.hlines(ys, chart.lows, chart.highs, color=PALETTE[0], linewidth=2)
    ax.plot(list(chart.lows) + list(chart.highs), ys + ys, linestyle="none", marker="|", markersize=8,
            color=PALETTE[0])  # fmt: skip
    ax.plot(chart.estimates, ys, linestyle="none", marker="o", markersize=5, color=PALETTE[0])
    for y, e, lo, hi in zip(ys, chart.estimates, chart.lows, chart.highs, strict=True):
        ax.annotate(f"{e:.3g} [{lo:.3g}, {hi:.3g}]", (hi, y), xytext=(6, 0), textcoords="offset points",
                    va="center", fontsize=7.5, color="#4a4f55")  # fmt: skip
    ax.set_yticks(ys, [_short(r, 48) for r in chart.rows])
    ax.set_ylim(len(ys) - 0.5, -0.5)  # the first row on top
    ax.margins(x=0.25)  # room for the values at the right
    ax.grid(True, axis="x")
    ax.grid(False, axis="y")


def render(chart: Chart, fmt: str = "svg") -> bytes:
    """The chart as SVG or PNG bytes."""
    if fmt not in FORMATS:
        raise VoirdireError(f"chart format {fmt!r}: one of {', '.join(FORMATS)}")
    plt = _pyplot()
    fig = figure(chart)
    buf = io.BytesIO()
    metadata: dict[str, Any] = {"Title": chart.title}
    if fmt == "svg":
        metadata["Date"] = None
    else:
        metadata["Software"] = "voirdire (matplotlib)"
    try:
        with warnings.catch_warnings():  # a layout that cannot fit every label still draws the chart
            warnings.simplefilter("ignore", UserWarning)
            fig.savefig(buf, format=fmt, metadata=metadata, dpi=110)
    finally:
        plt.close(fig)
    return buf.getvalue()


def save(charts: Iterable[Chart], folder: Path, formats: Sequence[str] = ("svg",)) -> list[Path]:
    """Every chart into ``folder`` as ``<name>.<fmt>`` for each format; the paths written."""
    for fmt in formats:
        if fmt not in FORMATS:
            raise VoirdireError(f"--plot-format {fmt}: one of {', '.join(FORMATS)}")
    _pyplot()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise VoirdireError(f"--plot {folder}: cannot create the folder ({exc.strerror})") from None
    written = []
    for chart in charts:
        for fmt in formats:
            path = folder / f"{slug(chart.name)}.{fmt}"
            write_atomic(path, render(chart, fmt), "--plot")
            written.append(path)
    return written


# ----------------------------------------------------------------------------------- the charts of a transcript


def chart_fold(name: str) -> tuple[ReportFold[Any, Any], ChartFold | None]:
    """The report fold and the chart declarations of the protocol registered as ``name`` (none when it is not
    installed: the counts and the overview charts)."""
    from voirdire.registry import registrations

    reg = registrations().get(name)
    if reg is None:
        return generic_report, None
    return reg.fold, getattr(reg, "charts", None)


def _with_charts(header: RunHeader | None, kept: dict[str, Any]) -> ReportFold[Any, Any]:
    """The protocol's report fold, keeping beside each session's value its overview and its chart value."""
    fold, charts = chart_fold(header.protocol if header else "")
    gold = header.display.views.verdict.gold if header else ""
    fields = header.display.item_fields if header else ()

    def session(s: SessionRecord) -> tuple[Any, Any, Any]:
        return fold.session(s), overview(s, gold, fields), charts.session(s) if charts else None

    def finish(values: Sequence[tuple[Any, Any, Any]], ctx: Any) -> Report:
        kept["charts"] = charts
        kept["overview"] = map_values(values, itemgetter(1))
        kept["values"] = map_values(values, itemgetter(2))
        return fold.finish(map_values(values, itemgetter(0)), ctx)

    # Spooled as the protocol's own fold asks: its values (LMvLM's rows) stay on disk, not held beside the charts'.
    return ReportFold(session=session, finish=finish, spooled=fold.spooled)


def _fold(
    path: str | Path,
    prices: Prices | None,
    *,
    ci: float = DEFAULT_CI,
    alongside: Sequence[ReportFold[Any, Any]] = (),
) -> tuple[Report, list[Overview], ChartFold | None, list[Any]]:
    kept: dict[str, Any] = {}
    folds: dict[str, ReportFold[Any, Any]] = {}

    def fold_for(header: RunHeader | None) -> ReportFold[Any, Any]:
        name = header.protocol if header else ""
        if name not in folds:
            folds[name] = _with_charts(header, kept)
        return folds[name]

    report, _ = report_file(path, fold_for, prices=prices, ci=ci, alongside=alongside)
    overviews = gold_from_rows(report, kept.get("overview", []))
    return report, overviews, kept.get("charts"), kept.get("values", [])


def transcript_overview(
    path: str | Path,
    *,
    prices: Prices | None = None,
    ci: float = DEFAULT_CI,
    alongside: Sequence[ReportFold[Any, Any]] = (),
) -> tuple[Report, list[Overview]]:
    """A transcript's report and each session's verdict, gold correctness and latencies (``voirdire compare``);
    ``ci``: the report's interval level (0: none); ``alongside``: more folds made in the same pass over the file
    (``report_file``'s)."""
    report, overviews, _, _ = _fold(path, prices, ci=ci, alongside=alongside)
    return report, overviews


def transcript_charts(
    path: str | Path,
    *,
    prices: Prices | None = None,
    left_out: list[LeftOut] | None = None,
    alongside: Sequence[ReportFold[Any, Any]] = (),
) -> tuple[Report, list[Chart]]:
    """A transcript's report and its charts: the overview every transcript offers, then its protocol's. A chart
    that would show nothing is not drawn; ``left_out`` collects each with its one-line reason. ``alongside``: more
    folds made in the same pass over the file (``report_file``'s)."""
    report, overviews, declared, values = _fold(path, prices, alongside=alongside)
    charts: list[Chart] = overview_charts(report, overviews, left_out)
    if declared is not None:
        charts.extend(declared.charts(values, report))
        if left_out is not None:
            left_out.extend(declared.left_out(values, report))
    return report, charts
