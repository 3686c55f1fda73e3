"""``voirdire nodata`` (and ``voirdire run no_data``): Algorithm 1 over a data set, one session per (seed, datapoint).

``--seed N --seeds K`` runs seeds N..N+K-1 into ONE transcript: session ids are seed-tagged (``seed<S>-<row>``)
and every item carries its seed, so the parameters in the header do not depend on the seeds and re-running with
more seeds (or a larger ``--limit``) resumes and adds only the missing sessions. ``--seed`` is Algorithm 1's
seed only: it is not forwarded to model roles (see docs/no_data.md).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from voirdire.kit import CommandSpec, ParamsCLI, Protocol
from voirdire.kit.cli import InputError, Inputs

from . import plugin
from .data import FILES, resolve_dataset
from .protocol import NoDataProtocol, NoDataProtocolParams, make_items
from .report import NoDataReport

if TYPE_CHECKING:
    from voirdire.kit import RunOutcome


def _retry_temperature(text: str) -> float | None:
    try:
        return None if text.strip().lower() == "none" else float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a temperature >= 0 or 'none', got {text!r}") from None


PARAMS = ParamsCLI(
    negate={"relabel_each_round": "--label-once"},
    convert={"retry_temperature": _retry_temperature},
    choices={"evaluator": ("decision-tree", "llm"), "generator": ("oracle", "lie-sigma", "lie-f", "lie-p", "llm")},
    help={
        "evaluator": "who labels (default: the decision tree)",
        "retry_temperature": "sampling temperature of attempts 2.. (default 0.7; none = the role's own)",
        "relabel_each_round": "label each datapoint once, not every round (--evaluator llm)",
    },
    metavar={"data": "ip|oop|PATH", "retry_temperature": "T|none"},
    title="No-Data Algorithm (Alg. 1, §6.1, §8; LLM options need --evaluator llm)",
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seeds", type=int, default=1, help="run seeds --seed .. --seed+N-1; mean ± sd over them")


def load_inputs(args: argparse.Namespace, protocol: Protocol[Any, Any]) -> Inputs:
    """The data set's items for every seed, after checking the seeds and the role bindings and building the
    run's state (the tree, the train split) so that a bad setup fails before the run."""
    assert isinstance(protocol, NoDataProtocol)
    args.seed = 0 if args.seed is None else args.seed  # recorded in the header as the first Alg. 1 seed
    if args.seed < 0:
        raise InputError(f"--seed must be >= 0, got {args.seed}")
    if args.seeds < 1:
        raise InputError(f"--seeds must be >= 1, got {args.seeds}")
    bound = sorted({entry.partition("=")[0] for entry in args.model if "=" in entry} & set(protocol.rule_roles()))
    if bound:
        raise InputError(f"--model {bound[0]}=...: the {bound[0]} is a rule agent in this configuration, not a model")
    p = protocol.params
    dataset = resolve_dataset(p.data, p.rubric)
    protocol.prepare()
    items = make_items(dataset, range(args.seed, args.seed + args.seeds), offset=args.offset, limit=args.limit)
    if not items:
        rows = len(dataset.rows)
        raise InputError(f"--offset: {args.offset} skips every datapoint of {dataset.path} (it has {rows})")
    # The command line adds a digest of the parameters and the model bindings to this name (``default_out``): the
    # same command resumes, another one (φ, lie, r, another file of the same name, another model) gets its own file.
    tag = p.data if p.data in FILES else Path(p.data).stem
    out = Path("transcripts") / f"no_data-{tag}-{p.evaluator}-{p.generator}.jsonl"
    return Inputs(items=items, dataset=dataset.path, out=out, seed=args.seed)


def summarize(o: RunOutcome) -> tuple[dict[str, Any], str]:
    """The per-seed scores of the sessions this command asked for (a transcript may hold more seeds)."""
    p: NoDataProtocolParams = o.protocol.params
    r = cast(NoDataReport, o.report_of(o.result.session_ids))
    seeds = list(dict.fromkeys(it.seed for it in o.inputs.items))
    fields = {
        "data": p.data,
        "dataset": r.dataset,
        "path": o.inputs.dataset,
        "rubric": p.rubric_name,
        "datapoints": len(o.inputs.items) // len(seeds),
        "seeds": seeds,
        "sessions": len(o.inputs.items),
        "parameters": p.model_dump(mode="json"),
        "runs": [s.model_dump(mode="json") for s in r.runs],
        "aggregate": {k: v.model_dump() for k, v in r.aggregate.items()},
        **r.model_dump(mode="json", include={"usage", "total_usage", "ci", "ci_seed", "intervals"}),  # + --ci's
    }
    return fields, "\n".join([r.scores_text(), *r.interval_lines(), *r.usage_lines()])


NODATA = CommandSpec(
    command=plugin.no_data.command,
    help=plugin.no_data.help,
    description="Run Algorithm 1 of 'Labelling Data with Unknown References' (de Wynter 2025) on a data set of bit "
    "strings, one session per (seed, datapoint), and report accuracy, F1, success rate and flip rate with Lemma 1 / "
    "Theorem 1 beside each run. Data: ../shared/data/no_data_algorithm (or $VOIRDIRE_NO_DATA_DIR).",
    params=PARAMS,
    add_arguments=add_arguments,
    load_inputs=load_inputs,
    forward_seed=False,
    summarize=summarize,
)
