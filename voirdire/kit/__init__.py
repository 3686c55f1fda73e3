"""Everything a protocol package needs, from one import: ``from voirdire.kit import Protocol, Session, ...``.

A protocol is a paper's algorithm written against the Session; what it declares and uses comes from here:

- the algorithm: ``Protocol``, ``Session``, ``Reply``, ``StateMachine``, ``Statistics`` (its verdict's outcome);
- reading replies: ``read_yes_no``, ``read_polar``, ``read_label``, ``read_number`` with a protocol's words
  (``Polar``, ``Labels``), ``read_conclusion`` around a protocol's own reader (the conclusion a reply ends on),
  ``ReplySchema`` for structured replies, ``ParseError`` for a refusal;
- how it reads as a chat: ``DisplayHints``, ``StepView``, ``Column``, ``Views``, ``VerdictView``, ``Tone``;
- its report: ``Report``, ``ReportFold``, ``Context``, the shared statistics (``precision_recall_f1``, ``accuracy``,
  ``auroc``, ``cohen_kappa``, ``mean_sd``), intervals on them (``wilson``, ``proportion``, ``bootstrap_items``: an
  ``Interval``; ``DEFAULT_SEED``), charts declared as data (``ChartFold``, ``BarChart``, ...);
- its command line: ``Registration`` (and the ``Card`` its entry point may name instead: what ``voirdire --help`` and
  ``voirdire list`` show of it, as data), ``CommandSpec``, ``ParamsCLI``, ``ItemInputs``, ``Inputs``, ``RunOutcome``;
- its paper's tables for ``voirdire reproduce``: ``Reproduction``, ``Cell``, ``Outcome``, ``Options``;
- transcripts and runs, for reports and reproductions that read or run them: ``load``, ``iter_records``,
  ``SessionRecord``, ``run_in_memory``, ``arun``, ``arun_dataset``, ``load_outline`` and ``one_off_id`` (a single
  item's own session id).

The names are the core packages' own (their faces: ``voirdire.session``, ``voirdire.replies``, ...); the kit only
gathers them, so a third-party protocol has one place to look.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from voirdire.base import lazy_face

if TYPE_CHECKING:
    from voirdire.agents import FunctionAgent as FunctionAgent
    from voirdire.analysis import require as require, save as save
    from voirdire.api import (
        Clients as Clients,
        Models as Models,
        SessionFailed as SessionFailed,
        arun as arun,
        arun_dataset as arun_dataset,
        one_off_id as one_off_id,
        protocol as protocol,
        run_sync as run_sync,
    )
    from voirdire.base import VoirdireError as VoirdireError, read_text as read_text
    from voirdire.certificate import (
        DEFAULT_SEED as DEFAULT_SEED,
        Interval as Interval,
        bootstrap_f1 as bootstrap_f1,
        bootstrap_items as bootstrap_items,
        bootstrap_means as bootstrap_means,
        bootstrap_sums as bootstrap_sums,
        proportion as proportion,
        wilson as wilson,
    )
    from voirdire.chat import stage as stage
    from voirdire.models import (
        DEVICES as DEVICES,
        Device as Device,
        RoleSettings as RoleSettings,
        cross_encoder as cross_encoder,
        pick_device as pick_device,
        sentence_encoder as sentence_encoder,
    )
    from voirdire.registry import (
        Card as Card,
        CommandSpec as CommandSpec,
        CommandTable as CommandTable,
        DatasetError as DatasetError,
        InputError as InputError,
        Inputs as Inputs,
        ItemInputs as ItemInputs,
        OptionError as OptionError,
        ParamsCLI as ParamsCLI,
        Registration as Registration,
        RunOutcome as RunOutcome,
        add_params_options as add_params_options,
        as_list as as_list,
        build_params as build_params,
        cards as cards,
        default_summary as default_summary,
        get as get,
        given_params as given_params,
        load_items as load_items,
        read_records as read_records,
    )
    from voirdire.replies import (
        Labels as Labels,
        ParseError as ParseError,
        Polar as Polar,
        ReplySchema as ReplySchema,
        read_conclusion as read_conclusion,
        read_label as read_label,
        read_number as read_number,
        read_polar as read_polar,
        read_yes_no as read_yes_no,
    )
    from voirdire.reports import (
        PRF as PRF,
        BarChart as BarChart,
        Cell as Cell,
        Chart as Chart,
        ChartFold as ChartFold,
        Context as Context,
        LeftOut as LeftOut,
        Line as Line,
        LineChart as LineChart,
        Options as Options,
        Outcome as Outcome,
        Report as Report,
        ReportFold as ReportFold,
        Reproduction as Reproduction,
        ScatterChart as ScatterChart,
        Series as Series,
        accuracy as accuracy,
        auroc as auroc,
        category as category,
        cohen_kappa as cohen_kappa,
        counts as counts,
        f1_of_pairs as f1_of_pairs,
        kendall_tau_b as kendall_tau_b,
        map_values as map_values,
        mean_sd as mean_sd,
        model_args as model_args,
        paper_models_note as paper_models_note,
        pearson as pearson,
        precision_recall_f1 as precision_recall_f1,
        report_file as report_file,
        round_up as round_up,
        run_voirdire as run_voirdire,
        slug as slug,
        spearman as spearman,
    )
    from voirdire.runner import RunResult as RunResult, default_out as default_out, run_in_memory as run_in_memory
    from voirdire.session import (
        LONG_REPLY_CHARS as LONG_REPLY_CHARS,
        Assumed as Assumed,
        Budget as Budget,
        CallBudget as CallBudget,
        Figure as Figure,
        Protocol as Protocol,
        Reply as Reply,
        RoleCalls as RoleCalls,
        Session as Session,
        StateMachine as StateMachine,
        Statistics as Statistics,
        merged as merged,
    )
    from voirdire.transcript import (
        Column as Column,
        DisplayHints as DisplayHints,
        Guarantee as Guarantee,
        ModelCall as ModelCall,
        RunHeader as RunHeader,
        SessionRecord as SessionRecord,
        Step as Step,
        StepView as StepView,
        Tone as Tone,
        Transcript as Transcript,
        Verdict as Verdict,
        VerdictView as VerdictView,
        Views as Views,
        iter_records as iter_records,
        load as load,
        load_outline as load_outline,
    )

# Every name is imported at its first use (voirdire.base.faces): a protocol's registration, `voirdire --help` and
# Every name re-exported above (`X as X`) is exported, imported at its first use (voirdire.base.faces).
__getattr__, __dir__, _exports = lazy_face(__name__)
__all__ = [*_exports, "lazy_face"]  # the faces of protocol packages are built with it
