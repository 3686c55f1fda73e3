"""DCR's charts (Fig. 4 and Tables 2-4): Ẑ of every candidate after each round, the share consistent after each
round, the score distribution per round, and Ẑ against the human judgment with its correlation in the title."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from voirdire.kit import Report
from voirdire.kit.charts import BarChart, Chart, ChartFold, Line, LineChart, ScatterChart, Series
from voirdire.kit.reports import LeftOut

from .human_correlation import Correlation
from .report import DCRReport


def _last_scored(scores: Sequence[float | None], r: int) -> float | None:
    """Ẑ after round r: a candidate stays as its last scored round left it (as the report's Fig. 4 counts)."""
    seen = [x for x in scores[: r + 1] if x is not None]
    return seen[-1] if seen else None


def correlation_title(what: str, corr: Correlation) -> str:
    values = corr.values()
    names = {"pearson": "r", "spearman": "ρ", "kendall": "τ", "auroc": "AUROC"}
    shown = ", ".join(f"{names[k]} = {v:.3f}" for k, v in values.items()) or "undefined"
    return f"{what}: {shown} (n = {corr.n})"


def correlation_scatter(
    name: str, what: str, metric: Sequence[float], human: Sequence[float], corr: Correlation, xlabel: str
) -> ScatterChart:
    """A metric against the human judgment, its correlation (ρ, τ ...) in the title (``voirdire correlate``)."""
    return ScatterChart(
        name,
        correlation_title(what, corr),
        xlabel,
        "human judgment",
        tuple(map(float, metric)),
        tuple(map(float, human)),
    )


def charts(values: Sequence[Any], report: Report) -> list[Chart]:
    if not isinstance(report, DCRReport):
        return []
    rows = [r for r in report.rows if r.get("scores")]
    out: list[Chart] = []
    rounds = max((len(r["scores"]) for r in rows), default=0)
    if rows:
        xs = tuple(float(r) for r in range(rounds))
        lines = []
        per_round: list[list[float]] = [[] for _ in range(rounds)]
        for row in rows:
            ys = [_last_scored(row["scores"], r) for r in range(rounds)]
            kept = [(x, y) for x, y in zip(xs, ys, strict=True) if y is not None]
            for r, y in enumerate(ys):
                if y is not None:
                    per_round[r].append(y)
            if kept:
                lines.append(Line(None, tuple(x for x, _ in kept), tuple(y for _, y in kept), "faint"))
        means = [(x, sum(v) / len(v)) for x, v in zip(xs, per_round, strict=True) if v]
        lines.append(Line("mean Ẑ", tuple(x for x, _ in means), tuple(y for _, y in means), "line"))
        out.append(
            LineChart(
                "dcr-scores-per-round",
                f"DCR: Ẑ after each round, every candidate ({len(rows)}) and the mean",
                "round (0 = the original candidate)",
                "Ẑ (share of sentences consistent)",
                tuple(lines),
                ylim=(-0.02, 1.02),
                integer_x=True,
            )
        )
    if report.consistent_after_round:
        shares = report.consistent_after_round
        out.append(
            LineChart(
                "dcr-consistent-per-round",
                "DCR (Fig. 4): share of candidates consistent (Ẑ = 1) after each round",
                "round (0 = the original candidate)",
                "consistent (%)",
                (Line("consistent", tuple(float(r) for r in range(len(shares))), tuple(100 * s for s in shares)),),
                ylim=(0, 100),
                integer_x=True,
            )
        )
    if report.score_distribution:
        bins = tuple(report.score_distribution[0])
        out.append(
            BarChart(
                "dcr-score-distribution",
                "DCR (Fig. 4 right): Ẑ after each round, frequency per bin",
                "Ẑ bin",
                "candidates",
                bins,
                tuple(
                    Series(f"round {r}", tuple(float(d.get(b, 0)) for b in bins))
                    for r, d in enumerate(report.score_distribution)
                ),
            )
        )
    if report.correlation is not None:
        pairs = [
            (r["scores"][0], r["human"]) for r in rows if r["scores"][0] is not None and r.get("human") is not None
        ]
        if pairs:
            out.append(
                correlation_scatter(
                    "dcr-correlation",
                    f"DCR Ẑ vs human ({report.correlation_dataset or 'items'})",
                    [p[0] for p in pairs],
                    [p[1] for p in pairs],
                    report.correlation,
                    "Ẑ of the original candidate (DCE-AMC)",
                )
            )
    return out


def left_out(values: Sequence[Any], report: Report) -> list[LeftOut]:
    """DCR's charts that would be empty: no candidate scored (every evaluation unreadable), no human scores."""
    if not isinstance(report, DCRReport):
        return []
    out = []
    if not any(r.get("scores") for r in report.rows):
        why = "0 scored candidates: no candidate's Ẑ could be computed"
        out += [LeftOut(name, why) for name in ("dcr-scores-per-round", "dcr-consistent-per-round")]
    if report.correlation is None:
        out.append(LeftOut("dcr-correlation", "no human judgments in the data to correlate with"))
    return out


dcr_charts = ChartFold(charts=charts, left_out=left_out)


def correlate_points(data: str, metric: str, examples_of: Callable[[str, int | None], tuple[Any, Any]], *,
                     transcript: Any = None, score: str = "initial_score", limit: int | None = None,
                     stemmer: bool = True) -> tuple[list[float], list[float]]:  # fmt: skip
    """The (metric, human) pairs ``voirdire correlate`` correlated: the baseline's scores of the benchmark's items
    (read by ``correlate.examples_of``, passed in), or a DCR transcript's verdict statistic."""
    if metric == "dcr":
        from voirdire.kit.data import load

        pairs = [
            (float(s.verdict.statistics[score]), float(s.item["human"]))
            for s in load(transcript).sessions.values()
            if s.verdict is not None and s.verdict.statistics.get(score) is not None and s.item.get("human") is not None
        ]
        return [m for m, _ in pairs], [h for _, h in pairs]
    from .baselines import scorer

    examples, _ = examples_of(data, limit)
    return list(scorer(metric, stemmer=stemmer)(examples)), [float(e.item.human) for e in examples]  # type: ignore[arg-type]


def plot_correlation(args: Any, result: Any, examples_of: Callable[[str, int | None], tuple[Any, Any]]) -> None:
    """``voirdire correlate ... --plot DIR``: the scatter of the metric against the human judgment, ρ/τ in the
    title, as DIR/correlate-DATA-METRIC.svg."""
    import sys

    from voirdire.kit.reproduce import save

    score = "initial_score" if getattr(args, "score", "initial") == "initial" else "score"
    metric, human = correlate_points(args.data, args.metric, examples_of, transcript=args.transcript, score=score,
                                     limit=args.limit, stemmer=not args.no_stemmer)  # fmt: skip
    chart = correlation_scatter(
        f"correlate-{result.data}-{result.metric}", f"{result.data}: {result.metric} vs human", metric, human,
        result.correlation, result.metric,
    )  # fmt: skip
    written = save([chart], args.plot)
    print("wrote " + ", ".join(map(str, written)), file=sys.stderr)
