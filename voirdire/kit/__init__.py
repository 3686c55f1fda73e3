"""Everything a protocol package needs, from one import: ``from voirdire.kit import Protocol, Session, ...``.

A protocol is a paper's algorithm written against the Session; what it declares and uses comes from here:

- the algorithm: ``Protocol``, ``Session``, ``Reply``, ``StateMachine``, ``Statistics`` (its verdict's outcome);
- reading replies: ``read_yes_no``, ``read_polar``, ``read_label``, ``read_number`` with a protocol's words
  (``Polar``, ``Labels``), ``ReplySchema`` for structured replies, ``ParseError`` for a refusal;
- how it reads as a chat: ``DisplayHints``, ``StepView``, ``Column``, ``Views``, ``VerdictView``, ``Tone``;
- its report: ``Report``, ``ReportFold``, ``Context``, the shared statistics (``precision_recall_f1``, ``accuracy``,
  ``auroc``, ``cohen_kappa``, ``mean_sd``), intervals on them (``wilson``, ``proportion``, ``bootstrap_items``: an
  ``Interval``; ``DEFAULT_SEED``), charts declared as data (``ChartFold``, ``BarChart``, ...);
- its command line: ``Registration`` (and the ``Card`` its entry point may name instead: what ``voirdire --help`` and
  ``voirdire list`` show of it, as data), ``CommandSpec``, ``ParamsCLI``, ``ItemInputs``, ``Inputs``, ``RunOutcome``;
- its paper's tables for ``voirdire reproduce``: ``Reproduction``, ``Cell``, ``Outcome``, ``Options``;
- transcripts and runs, for reports and reproductions that read or run them: ``load``, ``iter_records``,
  ``SessionRecord``, ``run_in_memory``, ``arun``, ``arun_dataset``.

The names are the core packages' own (their faces: ``voirdire.session``, ``voirdire.replies``, ...); the kit only
gathers them, so a third-party protocol has one place to look.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from voirdire.base import lazy_face

if TYPE_CHECKING:
    from voirdire.agents import FunctionAgent
    from voirdire.analysis import require, save
    from voirdire.api import Clients, Models, SessionFailed, arun, arun_dataset, protocol, run_sync
    from voirdire.base import VoirdireError, read_text
    from voirdire.certificate import DEFAULT_SEED, Interval, bootstrap_items, bootstrap_means, proportion, wilson
    from voirdire.chat import stage
    from voirdire.models import DEVICES, Device, RoleSettings, cross_encoder, pick_device, sentence_encoder
    from voirdire.registry import (
        Card,
        CommandSpec,
        CommandTable,
        DatasetError,
        InputError,
        Inputs,
        ItemInputs,
        OptionError,
        ParamsCLI,
        Registration,
        RunOutcome,
        add_params_options,
        as_list,
        build_params,
        cards,
        default_summary,
        get,
        given_params,
        load_items,
        read_records,
    )
    from voirdire.replies import (
        Labels,
        ParseError,
        Polar,
        ReplySchema,
        read_label,
        read_number,
        read_polar,
        read_yes_no,
    )
    from voirdire.reports import (
        PRF,
        BarChart,
        Cell,
        Chart,
        ChartFold,
        Context,
        LeftOut,
        Line,
        LineChart,
        Options,
        Outcome,
        Report,
        ReportFold,
        Reproduction,
        ScatterChart,
        Series,
        accuracy,
        auroc,
        category,
        cohen_kappa,
        counts,
        f1_of_pairs,
        kendall_tau_b,
        mean_sd,
        model_args,
        paper_models_note,
        pearson,
        precision_recall_f1,
        report_file,
        run_voirdire,
        slug,
        spearman,
    )
    from voirdire.runner import RunResult, default_out, run_in_memory
    from voirdire.session import (
        LONG_REPLY_CHARS,
        Assumed,
        Budget,
        CallBudget,
        Figure,
        Protocol,
        Reply,
        RoleCalls,
        Session,
        StateMachine,
        Statistics,
        merged,
    )
    from voirdire.transcript import (
        Column,
        DisplayHints,
        Guarantee,
        ModelCall,
        RunHeader,
        SessionRecord,
        Step,
        StepView,
        Tone,
        Transcript,
        Verdict,
        VerdictView,
        Views,
        iter_records,
        load,
    )

# Every name is imported at its first use (voirdire.base.faces): a protocol's registration, `voirdire --help` and
# `voirdire list` import only what they name, never a run's autogen, runner, rich or numpy.
__getattr__ = lazy_face(
    __name__,
    {
        "voirdire.base": ("VoirdireError", "read_text"),
        "voirdire.models": ("DEVICES", "Device", "RoleSettings", "cross_encoder", "pick_device", "sentence_encoder"),
        "voirdire.registry": (
            "Card", "CommandSpec", "CommandTable", "DatasetError", "InputError", "Inputs", "ItemInputs", "OptionError",
            "ParamsCLI", "Registration", "RunOutcome", "add_params_options", "as_list", "build_params", "cards",
            "default_summary", "get", "given_params", "load_items", "read_records",
        ),
        "voirdire.replies": (
            "Labels", "ParseError", "Polar", "ReplySchema", "read_label", "read_number", "read_polar", "read_yes_no",
        ),
        "voirdire.reports": (
            "PRF", "BarChart", "Cell", "Chart", "ChartFold", "Context", "LeftOut", "Line", "LineChart", "Options",
            "Outcome", "Report", "ReportFold", "Reproduction", "ScatterChart", "Series", "accuracy", "auroc",
            "category", "cohen_kappa", "counts", "f1_of_pairs", "kendall_tau_b", "mean_sd", "model_args",
            "paper_models_note", "pearson", "precision_recall_f1", "report_file", "run_voirdire", "slug", "spearman",
        ),
        "voirdire.session": (
            "LONG_REPLY_CHARS", "Assumed", "Budget", "CallBudget", "Figure", "Protocol", "Reply", "RoleCalls",
            "Session", "StateMachine", "Statistics", "merged",
        ),
        "voirdire.transcript": (
            "Column", "DisplayHints", "Guarantee", "ModelCall", "RunHeader", "SessionRecord", "Step", "StepView",
            "Tone", "Transcript", "Verdict", "VerdictView", "Views", "iter_records", "load",
        ),
        "voirdire.agents": ("FunctionAgent",),
        "voirdire.analysis": ("require", "save"),
        "voirdire.api": ("Clients", "Models", "SessionFailed", "arun", "arun_dataset", "protocol", "run_sync"),
        "voirdire.certificate": (
            "DEFAULT_SEED", "Interval", "bootstrap_items", "bootstrap_means", "proportion", "wilson",
        ),
        "voirdire.chat": ("stage",),
        "voirdire.runner": ("RunResult", "default_out", "run_in_memory"),
    },
)

__all__ = [
    "DEFAULT_SEED",
    "DEVICES",
    "LONG_REPLY_CHARS",
    "PRF",
    "Assumed",
    "BarChart",
    "Budget",
    "CallBudget",
    "Card",
    "Cell",
    "Chart",
    "ChartFold",
    "Clients",
    "Column",
    "CommandSpec",
    "CommandTable",
    "Context",
    "DatasetError",
    "Device",
    "DisplayHints",
    "Figure",
    "FunctionAgent",
    "Guarantee",
    "InputError",
    "Inputs",
    "Interval",
    "ItemInputs",
    "Labels",
    "LeftOut",
    "Line",
    "LineChart",
    "ModelCall",
    "Models",
    "OptionError",
    "Options",
    "Outcome",
    "ParamsCLI",
    "ParseError",
    "Polar",
    "Protocol",
    "Registration",
    "Reply",
    "ReplySchema",
    "Report",
    "ReportFold",
    "Reproduction",
    "RoleCalls",
    "RoleSettings",
    "RunHeader",
    "RunOutcome",
    "RunResult",
    "ScatterChart",
    "Series",
    "Session",
    "SessionFailed",
    "SessionRecord",
    "StateMachine",
    "Statistics",
    "Step",
    "StepView",
    "Tone",
    "Transcript",
    "Verdict",
    "VerdictView",
    "Views",
    "VoirdireError",
    "accuracy",
    "add_params_options",
    "arun",
    "arun_dataset",
    "as_list",
    "auroc",
    "bootstrap_items",
    "bootstrap_means",
    "build_params",
    "cards",
    "category",
    "cohen_kappa",
    "counts",
    "cross_encoder",
    "default_out",
    "default_summary",
    "f1_of_pairs",
    "get",
    "given_params",
    "iter_records",
    "kendall_tau_b",
    "lazy_face",
    "load",
    "load_items",
    "mean_sd",
    "merged",
    "model_args",
    "paper_models_note",
    "pearson",
    "pick_device",
    "precision_recall_f1",
    "proportion",
    "protocol",
    "read_label",
    "read_number",
    "read_polar",
    "read_records",
    "read_text",
    "read_yes_no",
    "report_file",
    "require",
    "run_in_memory",
    "run_sync",
    "run_voirdire",
    "save",
    "sentence_encoder",
    "slug",
    "spearman",
    "stage",
    "wilson",
]
