"""What a run reports: the report contract (a fold over a transcript's records), statistics, prices, charts
declared as data and the paper tables a protocol declares for ``voirdire reproduce``.

Nothing here draws or runs anything: ``voirdire.analysis`` draws the charts and runs the reproductions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from voirdire.base import lazy_face

if TYPE_CHECKING:
    from voirdire.reports.charts import (
        BarChart,
        Chart,
        ChartFold,
        Heatmap,
        IntervalChart,
        LeftOut,
        Line,
        LineChart,
        Overview,
        ScatterChart,
        Series,
        agrees_with_gold,
        gold_from_rows,
        gold_labels,
        overview,
        overview_charts,
        slug,
    )
    from voirdire.reports.examples import ExampleError, ExampleReply, PaperExample, load_examples
    from voirdire.reports.fold import (
        Context,
        LiveReport,
        Report,
        ReportFold,
        as_fold,
        counts,
        generic_report,
        report_file,
    )
    from voirdire.reports.gate import GateError, Threshold, check_thresholds
    from voirdire.reports.metrics import (
        PRF,
        accuracy,
        auroc,
        cohen_kappa,
        f1_of_pairs,
        kendall_tau_b,
        mean_sd,
        pearson,
        precision_recall_f1,
        round_up,
        spearman,
    )
    from voirdire.reports.paper_tables import (
        Cell,
        Options,
        Outcome,
        Reproduction,
        ReproductionError,
        model_args,
        paper_models_note,
        run_voirdire,
    )
    from voirdire.reports.parts import category
    from voirdire.reports.prices import ENV, Cost, Price, Prices, load_prices, read_prices, run_cost, usd
    from voirdire.reports.spool import map_values
    from voirdire.reports.stability import (
        DEFAULT_DECIDED_AT,
        REPEAT_STEP,
        ItemStability,
        Stability,
        check_decided_at,
        majority,
        stability,
    )

# What runs: each name's module is imported at the name's first use (voirdire.base.faces).
__getattr__ = lazy_face(
    __name__,
    {
        "voirdire.reports.charts": (
            "BarChart", "Chart", "ChartFold", "Heatmap", "IntervalChart", "LeftOut", "Line", "LineChart", "Overview",
            "ScatterChart", "Series", "agrees_with_gold", "gold_from_rows", "gold_labels", "overview",
            "overview_charts", "slug",
        ),
        "voirdire.reports.examples": ("ExampleError", "ExampleReply", "PaperExample", "load_examples"),
        "voirdire.reports.fold": (
            "Context", "LiveReport", "Report", "ReportFold", "as_fold", "counts", "generic_report", "report_file",
        ),
        "voirdire.reports.metrics": (
            "PRF", "accuracy", "auroc", "cohen_kappa", "f1_of_pairs", "kendall_tau_b", "mean_sd", "pearson",
            "precision_recall_f1", "round_up", "spearman",
        ),
        "voirdire.reports.paper_tables": (
            "Cell", "Options", "Outcome", "Reproduction", "ReproductionError", "model_args", "paper_models_note",
            "run_voirdire",
        ),
        "voirdire.reports.parts": ("category",),
        "voirdire.reports.gate": ("GateError", "Threshold", "check_thresholds"),
        "voirdire.reports.prices": ("ENV", "Cost", "Price", "Prices", "load_prices", "read_prices", "run_cost", "usd"),
        "voirdire.reports.spool": ("map_values",),
        "voirdire.reports.stability": (
            "DEFAULT_DECIDED_AT", "REPEAT_STEP", "ItemStability", "Stability", "check_decided_at", "majority",
            "stability",
        ),
    },
)

__all__ = [
    "DEFAULT_DECIDED_AT",
    "ENV",
    "PRF",
    "REPEAT_STEP",
    "BarChart",
    "Cell",
    "Chart",
    "ChartFold",
    "Context",
    "Cost",
    "ExampleError",
    "ExampleReply",
    "GateError",
    "Heatmap",
    "IntervalChart",
    "ItemStability",
    "LeftOut",
    "Line",
    "LineChart",
    "LiveReport",
    "Options",
    "Outcome",
    "Overview",
    "PaperExample",
    "Price",
    "Prices",
    "Report",
    "ReportFold",
    "Reproduction",
    "ReproductionError",
    "ScatterChart",
    "Series",
    "Stability",
    "Threshold",
    "accuracy",
    "agrees_with_gold",
    "as_fold",
    "auroc",
    "category",
    "check_decided_at",
    "check_thresholds",
    "cohen_kappa",
    "counts",
    "f1_of_pairs",
    "generic_report",
    "gold_from_rows",
    "gold_labels",
    "kendall_tau_b",
    "load_examples",
    "load_prices",
    "majority",
    "map_values",
    "mean_sd",
    "model_args",
    "overview",
    "overview_charts",
    "paper_models_note",
    "pearson",
    "precision_recall_f1",
    "read_prices",
    "report_file",
    "round_up",
    "run_cost",
    "run_voirdire",
    "slug",
    "spearman",
    "stability",
    "usd",
]
