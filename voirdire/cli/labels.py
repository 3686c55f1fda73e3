"""``voirdire labels TRANSCRIPT``: the labels people gave (the sidecar ``TRANSCRIPT.labels.jsonl`` the viewer and
``voirdire review`` write) as a table, JSON or CSV; and the sidecar read as ``voirdire calibrate``'s labels when no
``--labels`` file is given (``calibration_labels``)."""

from __future__ import annotations

import argparse
import csv
import io
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from voirdire.base import mask_secrets, shown
from voirdire.cli.options import CLIError

if TYPE_CHECKING:
    from voirdire.certificate import Run
    from voirdire.transcript import HumanLabel

COLUMNS = ("item_id", "session_id", "verdict", "reading", "label", "annotator", "time", "comment", "sample", "blind")


def register(sub: Any) -> None:
    p = sub.add_parser(
        "labels",
        help="the labels people gave a run's verdicts (TRANSCRIPT.labels.jsonl): a table, --json or --csv",
    )
    p.add_argument("transcript", type=Path, metavar="TRANSCRIPT", help="a run's transcript (.jsonl)")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--json", action="store_true", help="one JSON array of the label lines")
    how.add_argument("--csv", action="store_true", help="CSV with a header row")
    p.add_argument(
        "--all", action="store_true", help="every line, superseded ones too (default: each annotator's latest per item)"
    )
    p.set_defaults(func=cmd_labels)


def cmd_labels(args: argparse.Namespace) -> int:
    from voirdire.transcript import current_labels, read_sidecar

    if not args.transcript.is_file():
        raise CLIError(f"{args.transcript}: no such transcript")
    every = read_sidecar(args.transcript)
    chosen = every if args.all else list(current_labels(every).values())
    rows = [row(x) for x in chosen]
    if args.json:
        print(mask_secrets(json.dumps(rows, indent=1, ensure_ascii=False)))
    elif args.csv:
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows({**r, "sample": _sample_text(r["sample"])} for r in rows)
        print(mask_secrets(out.getvalue()), end="")
    else:
        print(mask_secrets(shown(table(args.transcript, chosen, len(every)))))
    return 0


def row(label: HumanLabel) -> dict[str, Any]:
    return label.model_dump(mode="json")


def _sample_text(sample: dict[str, int] | None) -> str:
    return "" if sample is None else f"--sample {sample['size']} --seed {sample['seed']}"


def table(transcript: Path, chosen: list[HumanLabel], lines: int) -> str:
    from voirdire.transcript import sidecar_path

    side = sidecar_path(transcript)
    if not chosen:
        return f"{transcript}: no labels yet ({side.name} has none); label in `voirdire view` or `voirdire review`"
    out = [f"{side}: {lines} lines, {len(chosen)} shown"]
    out += [f"{'item':<16} {'annotator':<14} {'reading':<9} {'label':<14} {'verdict':<14} comment"]
    for x in chosen:
        out.append(f"{x.item_id:<16} {x.annotator:<14} {x.reading:<9} {x.label or '':<14} {x.verdict or '':<14} "
                   f"{x.comment.replace(chr(10), ' ')[:60]}")  # fmt: skip
    from voirdire.web import review_summary  # the viewer (starlette, jinja2): imported by this command only

    counts = review_summary(transcript)
    if counts is not None:
        out.append(counts)
    return "\n".join(out)


def calibration_labels(
    run: Run, transcript: Path, *, sample: int | None, seed: int | None, labels_are_random: bool
) -> tuple[dict[str, dict[str, bool]], str, str | None] | None:
    """The sidecar's labels as ``calibrate`` takes them (item → annotator → accepted), where they came from and
    how they are random; None when the sidecar holds no label. Each annotator's latest label of an item counts,
    an unsure one not at all. Labels given in one review queue name its sample, which then stands for
    ``--sample``/``--seed`` when those are not given."""
    from voirdire.certificate import RANDOM_ASSUMPTION, LabelsError, draw_sample, label_words
    from voirdire.transcript import current_labels, read_sidecar, sidecar_path

    every = read_sidecar(transcript)
    side = sidecar_path(transcript)
    words = label_words(run.decisions())
    known = {s.item_id for s in run.sessions}
    table: dict[str, dict[str, bool]] = {}
    samples = set()
    for (item, who), x in current_labels(every).items():
        if x.label is None:
            continue
        if item not in known:
            raise LabelsError(f"{side}: unknown item id {item!r} (no session of the transcript has it)")
        if x.label.lower() not in words:
            raise LabelsError(f"{side}: label {x.label!r} of item {item!r} is not one of this run's verdicts")
        table.setdefault(item, {})[who] = words[x.label.lower()]
        samples.add(x.sample)
    if not table:
        return None
    source = f"{side} ({sum(map(len, table.values()))} labels of {len(table)} items)"
    if sample is None and len(samples) == 1 and None not in samples:
        drawn_by = next(iter(samples))
        sample, seed = drawn_by.size, drawn_by.seed  # type: ignore[union-attr]
    items = run.item_ids()
    if sample is not None and seed is not None:
        drawn = set(draw_sample(items, sample, seed))
        stray = sorted(set(table) - drawn)
        if stray:
            raise LabelsError(f"{side}: item {stray[0]!r} is not in the sample drawn by --sample {sample} --seed "
                              f"{seed} (labels must be of the drawn items)")  # fmt: skip
        how = f"drawn by --sample {sample} --seed {seed} (the review queue's sample)"
        missing = len(drawn) - len(table)
        if missing:
            how += f"; {missing} of the {len(drawn)} drawn items have no label, taken as missing at random"
        return table, source, how
    if labels_are_random:
        return table, source, "declared by --labels-are-random"
    if set(items) <= set(table):
        return table, source, None
    raise LabelsError(
        f"{side}: {len(set(items) & set(table))} of the run's {len(items)} items are labelled, not all from one "
        f"review queue's sample: give the --sample N --seed S they were drawn by, or --labels-are-random if they "
        f"are a random sample (it assumes {RANDOM_ASSUMPTION})"
    )


def sidecar_labels(run: Run, args: argparse.Namespace) -> tuple[dict[str, dict[str, bool]], str, str | None] | None:
    """``calibrate``'s default labels: the sidecar of its one transcript (None with several, or no label)."""
    from voirdire.transcript import sidecar_path

    given = args.transcript if isinstance(args.transcript, list) else [args.transcript]
    if len(given) != 1 or not sidecar_path(given[0]).is_file():
        return None
    return calibration_labels(run, Path(given[0]), sample=args.sample, seed=args.seed,
                              labels_are_random=args.labels_are_random)  # fmt: skip
