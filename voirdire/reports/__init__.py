"""What a run reports: the report contract (a fold over a transcript's records), statistics, prices, charts
declared as data and the paper tables a protocol declares for ``voirdire reproduce``.

Nothing here draws or runs anything: ``voirdire.analysis`` draws the charts and runs the reproductions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from voirdire.base import lazy_face

if TYPE_CHECKING:
    from voirdire.reports.charts import (
        BarChart as BarChart,
        Chart as Chart,
        ChartFold as ChartFold,
        Heatmap as Heatmap,
        IntervalChart as IntervalChart,
        LeftOut as LeftOut,
        Line as Line,
        LineChart as LineChart,
        Overview as Overview,
        ScatterChart as ScatterChart,
        Series as Series,
        agrees_with_gold as agrees_with_gold,
        gold_from_rows as gold_from_rows,
        gold_labels as gold_labels,
        overview as overview,
        overview_charts as overview_charts,
        slug as slug,
    )
    from voirdire.reports.examples import (
        ExampleError as ExampleError,
        ExampleReply as ExampleReply,
        PaperExample as PaperExample,
        load_examples as load_examples,
    )
    from voirdire.reports.fold import (
        ReportFold as ReportFold,
        as_fold as as_fold,
        counts as counts,
        generic_report as generic_report,
    )
    from voirdire.reports.gate import (
        GateError as GateError,
        Threshold as Threshold,
        check_thresholds as check_thresholds,
    )
    from voirdire.reports.metrics import (
        PRF as PRF,
        accuracy as accuracy,
        auroc as auroc,
        cohen_kappa as cohen_kappa,
        f1_of_pairs as f1_of_pairs,
        kendall_tau_b as kendall_tau_b,
        mean_sd as mean_sd,
        pearson as pearson,
        precision_recall_f1 as precision_recall_f1,
        round_up as round_up,
        spearman as spearman,
    )
    from voirdire.reports.paper_tables import (
        Cell as Cell,
        Options as Options,
        Outcome as Outcome,
        Reproduction as Reproduction,
        ReproductionError as ReproductionError,
        model_args as model_args,
        paper_models_note as paper_models_note,
        run_voirdire as run_voirdire,
    )
    from voirdire.reports.parts import category as category
    from voirdire.reports.prices import (
        ENV as ENV,
        Cost as Cost,
        Price as Price,
        Prices as Prices,
        load_prices as load_prices,
        read_prices as read_prices,
        run_cost as run_cost,
        usd as usd,
    )
    from voirdire.reports.report import DEFAULT_CI as DEFAULT_CI, Context as Context, Report as Report
    from voirdire.reports.spool import map_values as map_values
    from voirdire.reports.stability import (
        DEFAULT_DECIDED_AT as DEFAULT_DECIDED_AT,
        ItemStability as ItemStability,
        Stability as Stability,
        check_decided_at as check_decided_at,
        majority as majority,
        stability as stability,
    )
    from voirdire.reports.stream import LiveReport as LiveReport, report_file as report_file

# Every name re-exported above (`X as X`) is exported, imported at its first use (voirdire.base.faces).
__getattr__, __dir__, __all__ = lazy_face(__name__)
