"""``voirdire qa-eval`` and ``voirdire run qa_entailment | qa_lexical | qa_token_f1``: grade the QA answers of a
dataset and score the grader against human judgments per QA system (Yao & Barbosa, Tables 1, 3, 9–11, 13)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from voirdire.kit import CommandSpec, ParamsCLI, Protocol
from voirdire.kit.cli import InputError, Inputs, OptionError, add_params_options, build_params, given_params

from . import plugin
from .baselines import LexicalMatchGrading, TokenF1Grading
from .data import load_dataset, select_systems
from .hierarchy import HierarchyCell
from .protocol import QAEntailmentGrading, QAEntailmentParams

if TYPE_CHECKING:
    from voirdire.kit import RunOutcome

# App. A.1: "For all GPT-3.5 API calls, we set seed=42, temperature=0.0 ... and set max_tokens=300".
PAPER_ROLE_SETTINGS: dict[str, Any] = {"max_tokens": 300, "temperature": 0.0, "seed": 42}
PAPER_ROLE_SOURCES = dict.fromkeys(PAPER_ROLE_SETTINGS, "the paper's setting, App. A.1")
ENTAILMENT = ParamsCLI(
    flags={"max_gold_answers": "--max-gold", "explain": "--partial-marks", "explain_cells": "--explain-sup"}
    | {"llm_score_sign": "--llm-score-negated", "backend": "--nli-model"},
    metavar={"nli_model": "PATH", "nli_labels": "L0,L1,L2", "max_gold_answers": "N"},
    exclude=frozenset({"backend", "roles", "explain", "explain_cells", "llm_score_sign", "share_gold_statements"}),
    title="entailment evaluator (§3, App. A, App. D)",
)
CLI = {
    "lexical": ParamsCLI(title="lexical match"),
    "f1": ParamsCLI(title="token F1", metavar={"threshold": "F1"}),
    "entailment": ENTAILMENT,
}
EVALUATORS = {"lexical": LexicalMatchGrading, "f1": TokenF1Grading, "entailment": QAEntailmentGrading}


def add_inputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", type=Path, required=True, help="EVOUNA NQ.json / TQ.json, or a generic .jsonl")
    p.add_argument("--system", action="append", default=[], metavar="NAME|all", help="QA system(s) to grade "
                   "(repeatable or comma-separated; EVOUNA: fid gpt35 chatgpt gpt4 newbing, or the paper's names "
                   "DPR-FiD InstructGPT ChatGPT GPT-4 BingChat); default all")  # fmt: skip


def add_qa_eval_arguments(p: argparse.ArgumentParser) -> None:  # what to grade, by which grader, its options
    add_inputs(p)
    p.add_argument("--evaluator", choices=list(EVALUATORS), help="which grader (required by qa-eval)")
    add_params_options(p, LexicalMatchGrading.Params, CLI["lexical"])
    add_params_options(p, TokenF1Grading.Params, CLI["f1"])
    g, fields = p.add_argument_group("partial marks (App. D)"), QAEntailmentParams.model_fields
    for name in ("explain", "explain_cells", "llm_score_sign"):
        g.add_argument(ENTAILMENT.flag(name), action="store_true", help=fields[name].description)


def entailment_values(args: argparse.Namespace) -> Mapping[str, Any]:
    """The partial-mark switches, and the NLI backend when --nli-model names a model."""
    values: dict[str, Any] = {"explain": True} if args.partial_marks else {}
    values |= {"explain_cells": (HierarchyCell.INF_ONLY, HierarchyCell.SUP_ONLY)} if args.explain_sup else {}
    values |= {"llm_score_sign": "negated"} if args.llm_score_negated else {}
    return values | ({"backend": "nli"} if given_params(args).get("nli_model") else {})


def make_protocol(args: argparse.Namespace, values: Mapping[str, Any]) -> Protocol[Any, Any]:
    """The grader --evaluator names (entailment under ``voirdire run``); another grader's option is an error."""
    evaluator = args.evaluator or ("entailment" if args.command == "run" else None)
    if evaluator is None:
        raise OptionError(f"--evaluator: give one of {', '.join(EVALUATORS)}")
    cls, others = EVALUATORS[evaluator], {o: c for o, c in EVALUATORS.items() if o != evaluator}
    wrong = {o: [CLI[o].flag(k) for k in values if k in c.Params.model_fields] for o, c in others.items()}
    if problems := [f"{', '.join(dict.fromkeys(f))}: only for --evaluator {o}" for o, f in wrong.items() if f]:
        raise OptionError("; ".join(problems))
    if cls is not QAEntailmentGrading:
        return cls(build_params(cls.Params, CLI[evaluator], values))
    return QAEntailmentGrading(build_params(QAEntailmentParams, ENTAILMENT, {"explain": False, **values}))


def load_qa_items(args: argparse.Namespace, protocol: Protocol[Any, Any]) -> Inputs:
    if not args.data.exists():
        raise InputError(f"{args.data}: no such dataset file")
    try:  # a bad row names its file and row; an unknown system lists the known ones
        systems = select_systems(args.system, evouna=args.data.suffix == ".json")
        items = load_dataset(args.data, systems=systems)
    except (OSError, ValueError) as exc:
        raise InputError(str(exc)) from exc
    if systems and not items:
        present = sorted({it.system for it in load_dataset(args.data)})
        raise InputError(f"{args.data}: no items of system(s) {systems}; the file has {present}")
    if not items:
        raise InputError(f"{args.data}: the dataset is empty (no items to grade)")
    if args.offset >= len(items):
        raise InputError(f"--offset: {args.offset} skips every item to grade in {args.data} (it has {len(items)})")
    items = items[args.offset :][: args.limit]  # both checked: --offset >= 0, --limit >= 1
    try:  # load the NLI model before the run, so a wrong path fails at once rather than in every session
        if isinstance(protocol, QAEntailmentGrading):
            protocol.entailment_backend()
    except (ImportError, OSError, ValueError) as exc:
        raise OptionError(f"--nli-model {protocol.params.nli_model}: cannot load an NLI cross-encoder: {exc}") from exc
    return Inputs(items=items, dataset=str(args.data))


def summarize(o: RunOutcome) -> tuple[dict[str, Any], str]:
    """The report of this command's items (a resumed transcript may hold others), with the data and parameters."""
    r = o.report_of(o.result.session_ids)  # this command's sessions (an item's repeats, with --repeats)
    payload = {"data": o.inputs.dataset, "parameters": o.protocol.params.model_dump(mode="json")}
    payload |= r.model_dump(mode="json", include={"usage", "total_usage"})  # model calls, tokens, cost
    return payload | r.metrics(), f"{o.inputs.dataset}: {len(o.inputs.items)} items\n{r.text()}"  # type: ignore[attr-defined]


QA_EVAL = CommandSpec(
    command=plugin.qa_entailment.command,
    help=plugin.qa_entailment.help,
    description="Grade every (question, system answer) pair of a dataset and report, per QA system, "
    "precision/recall/F1 ('judged correct' = positive) and accuracy of the evaluator against the human judgments; "
    "for the entailment evaluator also the answer hierarchy (Tables 9-10), both decision variants (Table 11) and, "
    "with partial marks, their AUROC (Tables 3, 13).",
    params=ENTAILMENT,
    add_arguments=add_qa_eval_arguments,
    load_inputs=load_qa_items,
    values=entailment_values,
    make_protocol=make_protocol,
    role_defaults=PAPER_ROLE_SETTINGS,
    role_default_sources=PAPER_ROLE_SOURCES,
    summarize=summarize,
)
LEXICAL = CommandSpec(
    help=plugin.qa_lexical.help,
    params=CLI["lexical"],
    add_arguments=add_inputs,
    load_inputs=load_qa_items,
    summarize=summarize,
)
TOKEN_F1 = replace(LEXICAL, help=plugin.qa_token_f1.help, params=CLI["f1"])
