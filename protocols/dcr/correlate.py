"""``voirdire correlate``: a metric's agreement with human judgment on a benchmark of §4.1 (Tables 2-4).

``--metric rouge-1|rouge-2|rouge-l|embedding`` scores the benchmark's items here; ``--metric dcr --transcript T``
reads Ẑ of the original candidates (DCE-AMC) from a ``voirdire dcr`` transcript. Beside each value the paper's
printed one, where it prints one. Registered in the ``voirdire.commands`` entry-point group (``add_command``);
``python -m voirdire.protocols.dcr.correlate`` runs it alone.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from voirdire.kit import VoirdireError
from voirdire.kit.models import DEVICES

from .baselines import METRICS
from .data import KIND, LOADERS, Example
from .human_correlation import Correlation, Kind

# What a correlation computes with (the transcript, the items, the scorers, the report) is imported by the functions
# that compute it: `voirdire --help` reads this module for the options of `voirdire correlate`.

# The rows Tables 2-4 print for the metrics computed here. Table 2's ROUGE-L is from BERTScore's paper, whose
# "PAWS" is PAWS-QQP; the PAWS here is PAWS-Wiki, so that row is shown but not compared.
PRINTED: dict[tuple[str, str], dict[str, float]] = {
    ("summeval", "rouge-2"): {"spearman": 0.187, "kendall": 0.155},
    ("summeval", "rouge-l"): {"spearman": 0.115, "kendall": 0.092},
    ("qags-cnn", "rouge-2"): {"pearson": 0.459, "spearman": 0.418, "kendall": 0.333},
    ("qags-cnn", "rouge-l"): {"pearson": 0.357, "spearman": 0.324, "kendall": 0.254},
    ("qags-xsum", "rouge-2"): {"pearson": 0.097, "spearman": 0.083, "kendall": 0.068},
    ("qags-xsum", "rouge-l"): {"pearson": 0.024, "spearman": -0.011, "kendall": -0.009},
    ("summeval", "dcr"): {"spearman": 0.700, "kendall": 0.668},
    ("qags-cnn", "dcr"): {"pearson": 0.782, "spearman": 0.760, "kendall": 0.706},
    ("qags-xsum", "dcr"): {"pearson": 0.602, "spearman": 0.602, "kendall": 0.602},
    ("paws", "dcr"): {"auroc": 0.792},
}
NOT_COMPARABLE = {("paws", "rouge-l"): "Table 2 prints 0.536 on PAWS-QQP (BERTScore's setting); this is PAWS-Wiki"}
TOLERANCE = 0.005


class CorrelateError(VoirdireError, ValueError):
    """A bad ``voirdire correlate`` option; the message names it."""


class Result(BaseModel):
    data: str
    metric: str
    correlation: Correlation
    printed: dict[str, float] | None = None
    difference: dict[str, float] | None = None
    within_tolerance: bool | None = None
    note: str | None = None

    def text(self) -> str:
        line = f"{self.data} {self.metric}: {self.correlation.text()}"
        if self.printed:
            shown = ", ".join(f"{k} {v:.3f}" for k, v in self.printed.items())
            verdict = "within 0.005" if self.within_tolerance else "differs"
            line += f"\n  paper: {shown} ({verdict})"
        if self.note:
            line += f"\n  note: {self.note}"
        return line


def compare(data: str, metric: str, corr: Correlation) -> Result:
    printed = PRINTED.get((data, metric))
    diff = None
    within = None
    if printed:
        values = corr.values()
        diff = {k: round(values[k] - v, 4) for k, v in printed.items() if k in values}
        within = bool(diff) and all(abs(d) <= TOLERANCE for d in diff.values())
    return Result(
        data=data,
        metric=metric,
        correlation=corr,
        printed=printed,
        difference=diff,
        within_tolerance=within,
        note=NOT_COMPARABLE.get((data, metric)),
    )


def examples_of(data: str, limit: int | None) -> tuple[list[Example], Kind | None]:
    from voirdire.kit.data import load_items

    from .data import load_benchmark
    from .items import item_from_record

    if data in LOADERS:
        examples = load_benchmark(data)
        kind: Kind | None = KIND[data]
    else:
        items = load_items(Path(data), item_from_record)
        examples = [Example(item=i, references=[i.reference]) for i in items]
        kind = None
    examples = examples[:limit] if limit is not None else examples
    if kind is None:
        humans = {e.item.human for e in examples}
        docs = [e.item.doc_id for e in examples]
        kind = "binary" if humans <= {0.0, 1.0} else "summary" if all(docs) and len(set(docs)) < len(docs) else "sample"
    if any(e.item.human is None for e in examples):
        raise CorrelateError(f"--data {data}: every item needs a human judgment ('human', 'score' or 'label')")
    return examples, kind


def baseline(
    data: str, metric: str, *, limit: int | None = None, stemmer: bool = True, device: str | None = "auto"
) -> Result:
    from voirdire.kit.runs import stage  # the chat's progress (rich): imported by the command, not by its registration

    from .baselines import scorer
    from .human_correlation import correlate

    with stage(f"reading {data}"):
        examples, kind = examples_of(data, limit)
    with stage(f"scoring {len(examples):,} candidates with {metric}"):
        values = scorer(metric, stemmer=stemmer, device=device)(examples)
    human = [float(e.item.human) for e in examples]  # type: ignore[arg-type]
    docs = [e.item.doc_id or e.item.id for e in examples]
    with stage(f"correlating with the human judgments ({kind} level)"):
        corr = correlate(kind, values, human, docs)  # type: ignore[arg-type]
    name = data if data in LOADERS else Path(data).stem
    return compare(name, metric, corr) if stemmer else compare(name, metric, corr).model_copy(update={"printed": None})


def from_transcript(data: str | None, transcript: Path, score: str = "initial_score") -> Result:
    from voirdire.kit.data import load
    from voirdire.kit.runs import stage

    from .report import dataset_kind, human_correlation

    with stage(f"reading {transcript}"):
        t = load(transcript)
    ran = {h.protocol for h in t.headers}
    if ran and ran != {"dcr"}:  # another protocol's sessions have no DCR score: say so, not "fewer than two"
        held = ", ".join(sorted(ran))
        raise CorrelateError(f"--transcript {transcript}: not a DCR transcript (it holds a {held} run)")
    sessions = list(t.sessions.values())
    if not sessions:
        raise CorrelateError(f"--transcript {transcript}: no sessions")
    name, _ = dataset_kind(sessions)
    if data and name and data in LOADERS and data != name:
        raise CorrelateError(f"--data {data}: the transcript's items come from {name}")
    _, corr = human_correlation(sessions, score)
    if corr is None:
        raise CorrelateError(f"--transcript {transcript}: fewer than two scored items with a human judgment")
    return compare(name or data or transcript.stem, "dcr", corr)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", required=True, metavar="NAME|PATH", help=f"{', '.join(LOADERS)}, or a file of items")
    p.add_argument("--metric", required=True, choices=[*METRICS, "dcr"], help="the metric to correlate")
    p.add_argument("--transcript", type=Path, help="--metric dcr: a voirdire dcr transcript of --data")
    p.add_argument(
        "--score",
        choices=["initial", "final"],
        default="initial",
        help="--metric dcr: the original candidates' score (DCE-AMC, default) or the final one",
    )
    p.add_argument("--limit", type=int, help="the first N items only (baselines)")
    p.add_argument("--no-stemmer", action="store_true", help="ROUGE without Porter stemming")
    p.add_argument(
        "--device",
        choices=DEVICES,
        default="auto",
        help="--metric embedding: where the encoder runs (auto: a GPU where there is one, else the CPU)",
    )
    p.add_argument("--json", action="store_true")
    p.add_argument("--plot", type=Path, metavar="DIR", help="also draw the metric against the human scores (SVG)")


def cmd_correlate(args: argparse.Namespace) -> int:
    if args.plot is not None:
        from voirdire.kit.reproduce import require

        require()  # before the work: without matplotlib, a one-line error saying how to install it
    if args.metric == "dcr":
        if args.transcript is None:
            raise CorrelateError("--transcript: --metric dcr reads the scores of a voirdire dcr transcript")
        result = from_transcript(args.data, args.transcript, "initial_score" if args.score == "initial" else "score")
    else:
        if args.transcript is not None:
            raise CorrelateError(f"--transcript: only for --metric dcr, not {args.metric}")
        if args.limit is not None and args.limit < 2:
            raise CorrelateError("--limit: at least 2 items")
        result = baseline(
            args.data, args.metric, limit=args.limit, stemmer=not args.no_stemmer, device=args.device
        )
    print(result.model_dump_json(indent=2) if args.json else result.text())
    if args.plot is not None:
        from .charts import plot_correlation

        plot_correlation(args, result, examples_of)
    return 0


def add_command(sub: Any) -> None:
    """``voirdire correlate``, for the core's sub-command table."""
    p = sub.add_parser("correlate", help="a metric's correlation with human judgment on a DCR benchmark")
    add_arguments(p)
    p.set_defaults(func=cmd_correlate)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="voirdire correlate", description=__doc__.splitlines()[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return cmd_correlate(args)
    except VoirdireError as exc:
        print(f"voirdire correlate: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
