"""Charts that do not mislead: a chart with nothing to show is left out with its reason, counts have whole-number
ticks, bars carry their value and n, singular and plural are right, No-Data's Theorem 1 chart says what its bound
bounds, a dense scatter is jittered and translucent, every chart has one style, and thousands of distinct
decisions make one bar chart of the top ones and "other"."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from voirdire.analysis.drawing import MEANINGS, PALETTE, figure, render, transcript_charts
from voirdire.reports.charts import BarChart, LeftOut, Overview, ScatterChart, Series, overview_charts, plural

SVG = "{http://www.w3.org/2000/svg}"


def svg_texts(data: bytes) -> list[str]:
    return ["".join(t.itertext()) for t in ET.fromstring(data).iter(f"{SVG}text")]


def test_a_chart_with_nothing_to_show_is_left_out_with_its_reason(transcripts: dict[str, Path]) -> None:
    left: list[LeftOut] = []
    _, charts = transcript_charts(transcripts["no_data"], left_out=left)  # rule agents: no model call, no failure
    names = {c.name for c in charts}
    assert "parse-failures" not in names and "tokens" not in names
    reasons = {x.name: x.reason for x in left}
    assert reasons["tokens"] == "no model calls: every role was played by rules"
    assert re.fullmatch(r"no parse failures: all \d+ replies read", reasons["parse-failures"])
    left = []
    _, charts = transcript_charts(transcripts["cross_examination"], left_out=left)
    assert "parse-failures" in {c.name for c in charts} and not left  # 2 failures: drawn


def test_count_axes_have_whole_number_ticks_and_bars_their_values(transcripts: dict[str, Path]) -> None:
    _, charts = transcript_charts(transcripts["no_data"])
    verdicts = next(c for c in charts if c.name == "verdicts")
    drawn = svg_texts(render(verdicts))
    assert not [t for t in drawn if re.fullmatch(r"\d+\.\d+", t)], drawn  # 0, 1, 2: never 0.25, 1.75
    assert {"0", "1", "2"} <= set(drawn)
    _, charts = transcript_charts(transcripts["cross_examination"])
    failures = next(c for c in charts if c.name == "parse-failures")
    assert isinstance(failures, BarChart) and failures.n is not None
    fig = figure(failures)
    labels = [t.get_text() for t in fig.axes[0].texts]
    assert "100%\nn = 2" in labels and all("n = " in x for x in labels), labels
    assert max(fig.axes[0].get_yticks()) <= 100  # the values have room above the bars, the ticks stop at 100 %


def test_plural_and_singular() -> None:
    assert plural(1, "session") == "1 session" and plural(2, "session") == "2 sessions"
    assert plural(1, "reply", "replies") == "1 reply" and plural(1200, "reply", "replies") == "1,200 replies"


def test_the_theorem_1_chart_says_it_is_an_upper_bound(transcripts: dict[str, Path]) -> None:
    _, charts = transcript_charts(transcripts["no_data"])
    theorem = next(c for c in charts if c.name == "no-data-theorem1")
    assert theorem.caption.startswith("Theorem 1 is an upper bound: E[correct] ≤ ")
    assert "for an evaluator that lies iff it mislabels" in theorem.caption
    assert "as the theorem allows" in theorem.caption or "does not lie exactly when it mislabels" in theorem.caption
    assert any("upper bound" in t for t in svg_texts(render(theorem)))


def test_a_dense_scatter_is_jittered_and_translucent() -> None:
    xs = tuple(float(i % 3) / 2 for i in range(600))  # 600 points on three scores
    ys = tuple(float(i % 5) for i in range(600))
    chart = ScatterChart("s", "dense", "score", "human", xs, ys)
    fig = figure(chart)
    points = fig.axes[0].collections[0]
    assert points.get_alpha() < 0.5
    assert len({round(float(x), 6) for x, _ in points.get_offsets()}) > 3  # spread around the three scores
    assert render(chart) == render(chart)  # seeded: the same bytes twice


def test_every_chart_has_one_style() -> None:
    gold = (Series("agrees with gold", (2.0, 1.0)), Series("disagrees with gold", (0.0, 1.0)))
    chart = BarChart("v", "Verdicts", "decision", "sessions", ("a", "b"), gold, stacked=True)
    fig = figure(chart)
    import matplotlib

    assert matplotlib.rcParams["font.family"] == ["DejaVu Sans"]
    assert not fig.axes[0].spines["top"].get_visible() and not fig.axes[0].spines["right"].get_visible()
    good = matplotlib.colors.to_hex(fig.axes[0].patches[0].get_facecolor())
    assert good == MEANINGS["agrees with gold"]
    plain = figure(BarChart("t", "Tokens", "role", "tokens", ("a",), (Series("prompt", (3.0,)),)))
    assert matplotlib.colors.to_hex(plain.axes[0].patches[0].get_facecolor()) == PALETTE[0]
    assert fig.axes[0].get_title(loc="left") == "Verdicts"


@pytest.mark.parametrize("distinct", [6000])
def test_thousands_of_decisions_make_the_top_ones_and_other(transcripts: dict[str, Path], distinct: int) -> None:
    report, _ = transcript_charts(transcripts["no_data"])
    values = [Overview(f"i{i}", f"decision {i}", None, None, ()) for i in range(distinct)]
    chart = next(c for c in overview_charts(report, values) if c.name == "verdicts")
    assert isinstance(chart, BarChart) and len(chart.categories) == 12
    assert chart.categories[-1] == f"other ({distinct - 11:,} decisions)"
    assert sum(sum(s.values) for s in chart.series) == distinct
    assert chart.title == f"Verdicts of {distinct:,} sessions (no gold labels)"


def test_the_charts_pass_holds_no_session_in_memory(transcripts: dict[str, Path]) -> None:
    """The charts' pass keeps each session's values in the report's spool, as the protocol's own report does:
    the overviews and LMvLM's rows are read back one at a time, never a list of every session."""
    from voirdire.analysis.drawing import transcript_overview
    from voirdire.registry import registrations
    from voirdire.reports import report_file
    from voirdire.reports.spool import Values

    path = transcripts["cross_examination"]
    report, overviews = transcript_overview(path)
    assert isinstance(overviews, Values) and isinstance(report.rows, Values)
    plain, _ = report_file(path, registrations()["cross_examination"].fold)
    assert list(report.rows) == list(plain.rows) and len(overviews) == plain.sessions
    assert [c.title for c in overview_charts(report, overviews)] == [
        c.title for c in overview_charts(report, list(overviews))
    ]
