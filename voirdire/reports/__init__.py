"""What a run reports: the report contract (a fold over a transcript's records), statistics, prices, charts
declared as data and the paper tables a protocol declares for ``voirdire reproduce``.

Nothing here draws or runs anything: ``voirdire.analysis`` draws the charts and runs the reproductions.
"""

from __future__ import annotations

from voirdire.reports.charts import (
    BarChart,
    Chart,
    ChartFold,
    Heatmap,
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
from voirdire.reports.fold import Context, Report, ReportFold, as_fold, category, counts, generic_report, report_file
from voirdire.reports.metrics import (
    PRF,
    accuracy,
    auroc,
    cohen_kappa,
    kendall_tau_b,
    mean_sd,
    pearson,
    precision_recall_f1,
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
from voirdire.reports.prices import ENV, Cost, Prices, load_prices, run_cost

__all__ = [
    "ENV",
    "PRF",
    "BarChart",
    "Cell",
    "Chart",
    "ChartFold",
    "Context",
    "Cost",
    "Heatmap",
    "LeftOut",
    "Line",
    "LineChart",
    "Options",
    "Outcome",
    "Overview",
    "Prices",
    "Report",
    "ReportFold",
    "Reproduction",
    "ReproductionError",
    "ScatterChart",
    "Series",
    "accuracy",
    "agrees_with_gold",
    "as_fold",
    "auroc",
    "category",
    "cohen_kappa",
    "counts",
    "generic_report",
    "gold_from_rows",
    "gold_labels",
    "kendall_tau_b",
    "load_prices",
    "mean_sd",
    "model_args",
    "overview",
    "overview_charts",
    "paper_models_note",
    "pearson",
    "precision_recall_f1",
    "report_file",
    "run_cost",
    "run_voirdire",
    "slug",
    "spearman",
]
