"""``voirdire nodata``: the No-Data Algorithm (de Wynter 2025) over a labelled data set, one session per datapoint.

An evaluator (the §8.0.2 decision tree, or any model with the App. D.2 prompts) labels each datapoint and must
convince a rule verifier over ``--rounds`` EV rounds (§6.1); Algorithm 1 keeps its label on success and flips
it with probability ``--phi`` on failure (the paper's φ; the authors' notebook flips w.p. 1 − φ). Prints
accuracy, F1, success rate and flip rate per seed (mean ± sd over ``--seeds``), with Lemma 1 and Theorem 1
beside each run.

Seeds. ``--seed N --seeds K`` runs seeds N..N+K-1 into ONE transcript: session ids are seed-tagged
(``seed<S>-<row>``) and every item carries its seed, so the run parameters in the header do not depend on the
seeds and re-running with more seeds (or a larger ``--limit``) resumes and adds only the missing sessions.
``--seed`` is the Algorithm 1 seed only: it is not forwarded to model roles (see docs/no_data.md).
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path
from typing import Any

from voirdire.cli import CLIError, add_model_options, add_run_options, finish, roles_from_args, run, run_summary
from voirdire.runner import default_out

EVALUATORS = ("decision-tree", "llm")
GENERATORS = ("oracle", "lie-sigma", "lie-f", "lie-p", "llm")
DEFAULT_RETRY_TEMPERATURE = 0.7


def _retry_temperature(text: str) -> float | str:
    if text.strip().lower() == "none":
        return "none"
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a temperature >= 0 or 'none', got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a temperature >= 0 or 'none', got {text!r}")
    return value


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "nodata",
        help="No-Data Algorithm: an evaluator labels data and must convince a rule verifier (EV protocol)",
        description="Run Algorithm 1 of 'Labelling Data with Unknown References' (de Wynter 2025) on a data set "
        "of bit strings, one session per (seed, datapoint), and report accuracy, F1, success rate and flip rate "
        "with Lemma 1 / Theorem 1 beside each run. Data: ../shared/data/no_data_algorithm (or "
        "$VOIRDIRE_NO_DATA_DIR).",
    )
    p.add_argument(
        "--data",
        default="ip",
        metavar="ip|oop|PATH",
        help="ip / oop = the paper's in-/out-of-phenomenon test split (498 points); PATH = a JSON [[x, y], ...] "
        "file (default ip)",
    )
    p.add_argument(
        "--rubric",
        choices=["ip", "oop"],
        help="the verifier's rubric: required with --data PATH (never guessed from the file name); for ip / oop "
        "it defaults to the split's own",
    )
    p.add_argument("--evaluator", choices=EVALUATORS, default="decision-tree", help="who labels (default: the DT)")
    p.add_argument(
        "--generator",
        choices=GENERATORS,
        help="how the evaluator produces x': oracle (matching datapoint, §8), lie-sigma / lie-f / lie-p (the lies "
        "of §8.1.1), llm (the LLM picks or writes it, App. D.2; --evaluator llm only). Default: oracle for the "
        "decision tree, llm for the LLM",
    )
    p.add_argument("--p", type=float, default=0.1, help="lie-p: probability of a random x' (paper: 0.1)")
    p.add_argument(
        "--label-noise", type=float, default=0.0, help="the evaluator flips its own label w.p. (Table 3: 0.1)"
    )
    p.add_argument("--rounds", type=int, default=3, help="EV rounds r (paper: 3)")
    p.add_argument("--phi", type=float, default=0.6, help="probability of flipping a failed label (paper's φ: 0.6)")
    p.add_argument("--seeds", type=int, default=1, help="run seeds --seed .. --seed+N-1; mean ± sd over them")
    v = p.add_argument_group("verifier and decision tree")
    v.add_argument("--epsilon", type=float, help="App. C.1: Challenge 2 fails iff δ(C(x), C(x')) ≥ ε, 0 < ε ≤ 1/2")
    v.add_argument("--subsets", choices=["whole", "substrings"], default="whole", help="S_x of Challenge 1")
    v.add_argument("--encoding", choices=["decimal", "bits"], default="decimal", help="decision-tree features")
    v.add_argument(
        "--lie-f-target",
        choices=["f", "bit-majority"],
        default="f",
        help="lie-f matches f(x') (paper) or the bits' majority (authors' notebook)",
    )
    v.add_argument(
        "--lie-sigma-mode",
        choices=["encoding", "permutation"],
        default="encoding",
        help="lie-sigma outputs an x' with C(x') = C(x) but not necessarily C̄(x) (paper, §8.1.1) or one whose C(x') "
        "is a permutation of C(x) (authors' notebook)",
    )
    g = p.add_argument_group("LLM evaluator (App. D.2 prompts, --evaluator llm)")
    g.add_argument("--llm-generation", choices=["pick", "generate"], help="Prompt 2 (pick, default) or Prompt 3")
    g.add_argument("--exemplars", type=int, help="IP-train exemplars in Prompts 1 and 3 (default 5)")
    g.add_argument("--attempts", type=int, help="attempts per call before a random answer (App. D.2: 5)")
    g.add_argument(
        "--retry-temperature",
        type=_retry_temperature,
        metavar="T|none",
        help=f"sampling temperature of attempts 2.. (default {DEFAULT_RETRY_TEMPERATURE}; none = the role's own)",
    )
    g.add_argument("--label-once", action="store_true", help="label each datapoint once, not every round")
    add_model_options(p)
    add_run_options(p)
    for action in p._actions:  # the shared --seed is this command's Algorithm 1 seed
        if "--seed" in action.option_strings:
            action.help = "Algorithm 1 seed (default 0); not forwarded to model roles"
    p.set_defaults(func=cmd_nodata)


def _params(args: argparse.Namespace) -> Any:
    from voirdire.protocols.no_data.protocol import NoDataProtocolParams

    llm_only = {
        "--generator llm": args.generator == "llm",
        "--llm-generation": args.llm_generation is not None,
        "--exemplars": args.exemplars is not None,
        "--attempts": args.attempts is not None,
        "--retry-temperature": args.retry_temperature is not None,
        "--label-once": args.label_once,
    }
    if args.evaluator != "llm":
        given = [flag for flag, on in llm_only.items() if on]
        if given:
            raise CLIError(f"{', '.join(given)}: only for --evaluator llm")
    retry = args.retry_temperature
    options: dict[str, Any] = {
        "data": args.data,
        "rubric": args.rubric,
        "evaluator": args.evaluator,
        "generator": args.generator or ("llm" if args.evaluator == "llm" else "oracle"),
        "p": args.p,
        "label_noise": args.label_noise,
        "rounds": args.rounds,
        "phi": args.phi,
        "encoding": args.encoding,
        "subsets": args.subsets,
        "epsilon": args.epsilon,
        "lie_f_target": args.lie_f_target,
        "lie_sigma_mode": args.lie_sigma_mode,
        "relabel_each_round": not args.label_once,
        "retry_temperature": DEFAULT_RETRY_TEMPERATURE if retry is None else (None if retry == "none" else retry),
    }
    for key in ("llm_generation", "exemplars", "attempts"):
        if getattr(args, key) is not None:
            options[key] = getattr(args, key)
    try:
        return NoDataProtocolParams(**options)
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise CLIError(f"invalid nodata options: {exc}") from exc


def _default_out(params: Any, dataset_tag: str) -> Path:
    """``transcripts/no_data-<data>-<evaluator>-<generator>-<hash>.jsonl``: stable per parameter set, so the same
    command resumes and a different one (another φ, lie, r ...) gets its own file instead of a refusal."""
    digest = hashlib.sha256(params.model_dump_json().encode()).hexdigest()[:8]
    return default_out("no_data", f"{dataset_tag}-{params.evaluator}-{params.generator}-{digest}")


def cmd_nodata(args: argparse.Namespace) -> int:
    from voirdire.protocols.no_data.data import DataError, resolve_dataset
    from voirdire.protocols.no_data.protocol import NoDataProtocol, make_items
    from voirdire.protocols.no_data.report import aggregate_scores, format_scores, score_run

    seed = 0 if args.seed is None else args.seed
    if seed < 0:
        raise CLIError(f"--seed must be >= 0, got {seed}")
    if args.seeds < 1:
        raise CLIError(f"--seeds must be >= 1, got {args.seeds}")
    if args.data not in ("ip", "oop") and args.rubric is None:
        raise CLIError(
            f"--data {args.data}: a data file needs --rubric ip|oop, the rubric the verifier checks "
            "(it is not guessed from the file name)"
        )
    params = _params(args)
    try:
        dataset = resolve_dataset(args.data, args.rubric)
        protocol = NoDataProtocol(params)
        protocol.deterministic_agents()  # trains the tree / loads the train split now: fail before the run
        if params.evaluator == "llm":
            protocol.llm_setup()
    except DataError as exc:
        raise CLIError(str(exc)) from exc
    rule_roles = set(protocol.deterministic_agents())
    bound = sorted({entry.partition("=")[0] for entry in args.model if "=" in entry} & rule_roles)
    if bound:
        raise CLIError(
            f"--model {bound[0]}=...: the {bound[0]} is a rule agent in this configuration "
            "(the verifier always; the evaluator unless --evaluator llm; the generator unless it is a rule liar "
            "beside an LLM evaluator)"
        )
    seeds = list(range(seed, seed + args.seeds))
    items = make_items(dataset, seeds, offset=args.offset, limit=args.limit)
    if not items:
        raise CLIError(f"{dataset.path}: no datapoints to label (after --offset / --limit)")
    tag = args.data if args.data in ("ip", "oop") else Path(args.data).stem
    out = args.out or _default_out(params, tag)
    # --seed is Algorithm 1's (the header records the first one); a model role gets no sampling seed from it:
    # retries at the retry temperature must differ, and a fixed per-role seed would repeat them (a role seed can
    # still come from --config).
    roles = roles_from_args(argparse.Namespace(**{**vars(args), "seed": None}))
    args.seed = seed
    try:
        result = run(protocol, items, args, out, dataset.path, roles=roles)
    except ValueError as exc:
        raise CLIError(str(exc)) from exc
    scores = score_run(protocol, items, result.verdicts)
    agg = aggregate_scores(scores) if scores else {}
    payload = {
        "data": args.data,
        "dataset": dataset.name,
        "path": dataset.path,
        "rubric": params.rubric_name,
        "datapoints": len(items) // len(seeds),
        "seeds": seeds,
        **run_summary(result, out),
        "sessions": len(items),
        "parameters": params.model_dump(mode="json"),
        "runs": [s.model_dump(mode="json") for s in scores],
        "aggregate": {k: v.model_dump() for k, v in agg.items()},
    }
    heading = (
        f"{dataset.name} ({payload['datapoints']} datapoints, verifier rubric {params.rubric_name}) · evaluator "
        f"{params.evaluator}, generator {params.generator} · r = {params.rounds}, φ = {params.phi} "
        "(P(flip a failed label), Alg. 1)"
    )
    return finish(args, result, payload, f"{heading}\n{format_scores(scores, agg)}")
