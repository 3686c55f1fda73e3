"""``voirdire qa-eval``: grade QA system answers (lexical match, token F1 or the entailment evaluator) and score
the grader against human judgments, per QA system (Yao & Barbosa, Tables 1, 3, 9–11, 13).

Every graded item is one session of a transcript (resumable like ``examine``); the printed numbers are computed
from the verdicts, so re-running the same command after an interruption finishes and reports the whole run.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from voirdire.cli import CLIError, add_model_options, add_run_options, finish, roles_from_args, run, run_summary
from voirdire.models import RoleSettings, load_role_config
from voirdire.runner import default_out

EVALUATORS = ("lexical", "f1", "entailment")
# App. A.1: "For all GPT-3.5 API calls, we set seed=42, temperature=0.0 ... and set max_tokens=300" (the released
# scripts send the same three). qa-eval gives every model role these unless the user sets them (flag or config).
PAPER_ROLE_SETTINGS: dict[str, Any] = {"max_tokens": 300, "temperature": 0.0, "seed": 42}


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "qa-eval",
        help="grade QA answers (lexical | f1 | entailment) and score the grader against human judgments",
        description="Grade every (question, system answer) pair of a dataset and report, per QA system, "
        "precision/recall/F1 ('judged correct' = positive) and accuracy of the evaluator against the human "
        "judgments; for the entailment evaluator also the answer hierarchy (Tables 9-10), both decision "
        "variants (Table 11) and, with partial marks, their AUROC (Tables 3, 13).",
    )
    p.add_argument("--data", type=Path, required=True, help="EVOUNA NQ.json / TQ.json, or a generic .jsonl")
    p.add_argument("--evaluator", choices=EVALUATORS, required=True, help="which grader")
    p.add_argument(
        "--system",
        action="append",
        default=[],
        metavar="NAME|all",
        help="QA system(s) to grade (repeatable or comma-separated; EVOUNA: fid gpt35 chatgpt gpt4 newbing, or "
        "the paper's names DPR-FiD InstructGPT ChatGPT GPT-4 BingChat); default all",
    )
    g = p.add_argument_group("entailment evaluator (§3, App. A, App. D)")
    g.add_argument("--decision", choices=["union", "minus"], default="union", help="App. B.1 variant (default union)")
    g.add_argument(
        "--partial-marks",
        action="store_true",
        help="explain A_inf - A_sup answers (Table 17 row 1): CIA, C and IA marks and their AUROC",
    )
    g.add_argument(
        "--inference-llm-score",
        action="store_true",
        help="also rate each explanation's difficulty (Table 17 row 2, 'Inference + LLM Score'); implies "
        "--partial-marks",
    )
    g.add_argument("--llm-score", action="store_true", help="the direct 'LLM Score' baseline (Table 17 row 3)")
    g.add_argument(
        "--llm-score-negated",
        action="store_true",
        help="rank the LLM Score baseline by -closeness, as the authors' cot_vs_pr.ipynb did for Table 13's 0.8827 "
        "(default: +closeness, the prompt's meaning)",
    )
    g.add_argument(
        "--explain-sup",
        action="store_true",
        help="also give partial marks (explanations, LLM Score) to A_sup - A_inf answers, as the authors' released "
        "code does",
    )
    g.add_argument("--max-gold", type=int, help="use at most N gold answers per question, in file order")
    g.add_argument(
        "--nli-model",
        metavar="PATH",
        help="entailment by a local NLI cross-encoder (sentence-transformers) instead of the evaluator model; "
        "local files only (a saved model folder, or a name already in the Hugging Face cache)",
    )
    g.add_argument(
        "--nli-labels",
        metavar="L0,L1,L2",
        help="the NLI model's class names in class-id order, when its config only says LABEL_0..2 "
        "(e.g. contradiction,entailment,neutral)",
    )
    b = p.add_argument_group("model-free evaluators")
    b.add_argument("--threshold", type=float, default=0.5, help="f1: judged correct at this token F1 (default 0.5)")
    b.add_argument(
        "--skip-empty-gold",
        action="store_true",
        help="lexical: ignore gold pieces that normalise to '' (which otherwise match everything, as in Table 1)",
    )
    add_model_options(p)
    paper = {
        "max_tokens": "bound every reply (qa-eval default 300, the paper's App. A.1 setting)",
        "temperature": "sampling temperature for every role (qa-eval default 0.0, App. A.1)",
        "seed": "sampling seed for every role (qa-eval default 42, App. A.1)",
    }
    for action in p._actions:  # the shared options, with qa-eval's defaults (PAPER_ROLE_SETTINGS)
        if action.dest in paper:
            action.help = paper[action.dest]
    add_run_options(p)
    p.set_defaults(func=cmd_qa_eval)


def _systems(values: list[str], data: Path) -> list[str] | None:
    from voirdire.protocols.qa_entailment import EVOUNA_SYSTEM_NAMES

    names = [s.strip() for v in values for s in v.split(",") if s.strip()]
    if not names or any(n.lower() == "all" for n in names):
        return None
    if data.suffix == ".json":  # EVOUNA: accept the paper's names too
        by_name = {v.lower(): k for k, v in EVOUNA_SYSTEM_NAMES.items()} | {k: k for k in EVOUNA_SYSTEM_NAMES}
        unknown = [n for n in names if n.lower() not in by_name]
        if unknown:
            raise CLIError(
                f"unknown EVOUNA system(s) {unknown}: use {', '.join(EVOUNA_SYSTEM_NAMES)} "
                f"or {', '.join(EVOUNA_SYSTEM_NAMES.values())}"
            )
        return list(dict.fromkeys(by_name[n.lower()] for n in names))
    return list(dict.fromkeys(names))


def _load(args: argparse.Namespace) -> list[Any]:
    from voirdire.protocols.qa_entailment import load_dataset
    from voirdire.protocols.qa_entailment.data import DatasetError as QADatasetError

    systems = _systems(args.system, args.data)
    if not args.data.exists():
        raise CLIError(f"{args.data}: no such dataset file")
    try:
        items = load_dataset(args.data, systems=systems)
    except (QADatasetError, OSError, UnicodeDecodeError) as exc:
        raise CLIError(str(exc)) from exc
    if systems and not items:
        everything = load_dataset(args.data)
        present = sorted({it.system for it in everything})
        raise CLIError(f"{args.data}: no items of system(s) {systems}; the file has {present}")
    items = items[args.offset :]
    if args.limit is not None:
        items = items[: args.limit]
    if not items:
        raise CLIError(f"{args.data}: no items to grade (after --system / --offset / --limit)")
    return items


def _protocol(args: argparse.Namespace) -> Any:
    from voirdire.protocols.qa_entailment.hierarchy import HierarchyCell
    from voirdire.protocols.qa_entailment.protocol import (
        LexicalMatchGrading,
        LexicalMatchParams,
        QAEntailmentGrading,
        QAEntailmentParams,
        TokenF1Grading,
        TokenF1Params,
    )

    entailment_only = {
        "--partial-marks": args.partial_marks,
        "--inference-llm-score": args.inference_llm_score,
        "--llm-score": args.llm_score,
        "--llm-score-negated": args.llm_score_negated,
        "--explain-sup": args.explain_sup,
        "--max-gold": args.max_gold is not None,
        "--nli-model": args.nli_model is not None,
        "--nli-labels": args.nli_labels is not None,
        "--decision minus": args.decision != "union",
    }
    if args.evaluator != "entailment":
        given = [flag for flag, on in entailment_only.items() if on]
        if given:
            raise CLIError(f"{', '.join(given)}: only for --evaluator entailment")
    if args.llm_score_negated and not args.llm_score:
        raise CLIError("--llm-score-negated: only with --llm-score")
    if args.evaluator != "f1" and args.threshold != 0.5:
        raise CLIError("--threshold: only for --evaluator f1")
    if args.evaluator != "lexical" and args.skip_empty_gold:
        raise CLIError("--skip-empty-gold: only for --evaluator lexical")
    try:
        if args.evaluator == "lexical":
            return LexicalMatchGrading(LexicalMatchParams(skip_empty_gold=args.skip_empty_gold))
        if args.evaluator == "f1":
            return TokenF1Grading(TokenF1Params(threshold=args.threshold))
        explain_cells = [HierarchyCell.INF_ONLY] + ([HierarchyCell.SUP_ONLY] if args.explain_sup else [])
        params = QAEntailmentParams(
            backend="nli" if args.nli_model else "llm",
            nli_model=args.nli_model,
            nli_labels=tuple(s.strip() for s in args.nli_labels.split(",")) if args.nli_labels else None,
            decision=args.decision,
            explain=args.partial_marks or args.inference_llm_score,
            inference_llm_score=args.inference_llm_score,
            llm_score=args.llm_score,
            llm_score_sign="negated" if args.llm_score_negated else "closeness",
            explain_cells=tuple(explain_cells),
            max_gold_answers=args.max_gold,
        )
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise CLIError(str(exc)) from exc
    return QAEntailmentGrading(params)


def _load_nli(protocol: Any, args: argparse.Namespace) -> None:
    """Load the NLI model before the run, so a wrong path fails at once rather than in every session."""
    if getattr(protocol.params, "backend", None) != "nli":
        return
    try:
        protocol.entailment_backend()
    except (ImportError, OSError, ValueError) as exc:
        raise CLIError(f"--nli-model {args.nli_model}: cannot load an NLI cross-encoder: {exc}") from exc


def _settings_given(args: argparse.Namespace, config: dict[str, RoleSettings], role: str) -> set[str]:
    """The generation settings the user chose for ``role``: by flag (every role), or in the ``--config`` table
    that binds the role (its own ``[roles.<role>]``, else ``[roles."*"]``, as the runner binds it)."""
    given = {key for key in PAPER_ROLE_SETTINGS if getattr(args, key, None) is not None}
    table = config.get(role) or config.get("*")
    if table is not None:
        given |= table.model_fields_set & set(PAPER_ROLE_SETTINGS)  # the keys written in the TOML table
    return given


def qa_roles(protocol: Any, args: argparse.Namespace) -> dict[str, RoleSettings]:
    """``roles_from_args`` with the paper's API settings (``PAPER_ROLE_SETTINGS``) filled in for every model role
    of ``protocol`` wherever the user set none. ``RoleSettings.max_tokens`` always has a value (the core's 256), so
    "not set" is read from the flags and the config, never from the value."""
    roles = roles_from_args(args)
    config = load_role_config(args.config) if args.config else {}
    rule_roles = set(protocol.deterministic_agents())
    for role in protocol.required_roles():
        if role in rule_roles:
            continue
        settings = roles.get(role) or roles.get("*") or RoleSettings()
        given = _settings_given(args, config, role)
        missing = {k: v for k, v in PAPER_ROLE_SETTINGS.items() if k not in given}
        if missing:
            roles[role] = settings.model_copy(update=missing)
    return roles


def cmd_qa_eval(args: argparse.Namespace) -> int:
    from voirdire.protocols.qa_entailment.evaluation import evaluate, format_report

    protocol = _protocol(args)
    items = _load(args)
    _load_nli(protocol, args)
    out = args.out or default_out(protocol.name, args.data)
    try:
        result = run(protocol, items, args, out, str(args.data), roles=qa_roles(protocol, args))
    except ValueError as exc:
        raise CLIError(str(exc)) from exc
    report = evaluate(items, result.verdicts, args.evaluator)
    payload = {
        "data": str(args.data),
        **run_summary(result, out),
        "parameters": protocol.params.model_dump(mode="json"),
        **report.model_dump(mode="json"),
    }
    return finish(args, result, payload, f"{args.data}: {len(items)} items\n{format_report(report)}")
