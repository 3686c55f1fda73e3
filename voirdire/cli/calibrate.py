"""``voirdire calibrate TRANSCRIPT``: the verdicts against human labels, with intervals, and a debiased estimate
from a random sample of labels (``voirdire.certificate``; docs/certificate.md)."""

from __future__ import annotations

import argparse
import json
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from shlex import quote
from typing import TYPE_CHECKING, Any
from urllib.parse import quote as url_quote, urlencode

from voirdire.base import VoirdireError, mask_secrets, shown, write_atomic
from voirdire.cli.labels import sidecar_labels
from voirdire.cli.options import add_command, at_least
from voirdire.cli.read import ci_level

if TYPE_CHECKING:
    from voirdire.certificate import (
        Judged,
        Run,
    )

VIEWER_PORT = 7788  # where ``voirdire view`` listens unless told otherwise (voirdire/web/server.py DEFAULT_PORT)


class CalibrateOptionError(VoirdireError, ValueError):
    """Options of ``voirdire calibrate`` that do not go together."""


def register(sub: Any) -> None:
    add_command(
        sub, "calibrate", add_calibrate_options,
        help="verdicts against human labels: confusion matrix, TPR/TNR, accuracy, κ, α with intervals, "
        "disagreements, and a prediction-powered estimate from a random sample of labels",
    )  # fmt: skip


def add_calibrate_options(p: argparse.ArgumentParser) -> None:
    from voirdire.certificate import DEFAULT_RESAMPLES, DEFAULT_SEED, RANDOM_ASSUMPTION  # imported by this command

    p.add_argument("transcript", type=Path, nargs="+", metavar="TRANSCRIPT",
                   help="a run's transcript (.jsonl); several: runs of one protocol over the same items, each role "
                   "configuration also calibrated on its own and every two compared")  # fmt: skip
    p.add_argument("--labels", type=Path, metavar="FILE",
                   help="human labels: JSONL or CSV with item_id, label and optional annotator "
                   "(default: the gold fields the protocol records)")  # fmt: skip
    p.add_argument("--sample", type=at_least(1), metavar="N",
                   help="the random sample of N items to label (with --seed): written by -o, checked against "
                   "--labels, or, with neither, the gold of these N items only (the rest hidden)")  # fmt: skip
    p.add_argument("--seed", type=int, metavar="S", help="the seed that draws --sample")
    p.add_argument("-o", "--out", type=Path, metavar="FILE", help="write the --sample items to label (JSONL) here")
    p.add_argument("--labels-are-random", action="store_true",
                   help="take --labels not drawn by --sample as a random sample anyway "
                   f"(assumes {RANDOM_ASSUMPTION})")  # fmt: skip
    p.add_argument("--ci", type=ci_level, default=0.95, metavar="LEVEL",
                   help="confidence level (default 0.95; 0: every figure without its interval)")  # fmt: skip
    p.add_argument("--score", metavar="STATISTIC",
                   help="the verdict statistic read as its score for AUROC and the reliability diagram (default: "
                   "the one the run header's display hints name, where the protocol has one)")  # fmt: skip
    p.add_argument("--viewer-url", metavar="URL",
                   help="the viewer's address (http://127.0.0.1:7788/) or a pattern with {key} and {session}: "
                   "each disagreement gets the URL of its chat (default: a viewer found serving the transcript on "
                   f"127.0.0.1:{VIEWER_PORT})")  # fmt: skip
    p.add_argument("--ci-seed", type=int, default=DEFAULT_SEED, metavar="SEED",
                   help=f"seed of the bootstrap resampling, recorded with each interval (default {DEFAULT_SEED})",
                   )  # fmt: skip
    p.add_argument("--resamples", type=at_least(100), default=DEFAULT_RESAMPLES, metavar="N",
                   help=f"bootstrap resamples, recorded with each interval (default {DEFAULT_RESAMPLES})")  # fmt: skip
    p.add_argument("--rows", type=at_least(0), default=20, help="disagreements listed (default 20; --json has all)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_calibrate)


def cmd_calibrate(args: argparse.Namespace) -> int:
    from voirdire.certificate import PEOPLE_SOURCE, calibrate, read_runs

    if (args.sample is None) != (args.seed is None):
        raise CalibrateOptionError("--sample and --seed go together: the seed is what makes the sample reproducible")
    if args.out is not None and (args.sample is None or args.labels is not None):
        raise CalibrateOptionError("-o writes the items of --sample N --seed S to label; it takes no --labels")
    run = read_runs(args.transcript, score=args.score)
    if args.out is not None:
        return _write_sample(run, args)
    kind = "people"
    if args.labels is not None:
        labels, source, random_labels = _file_labels(run, args)
    elif (people := sidecar_labels(run, args)) is not None:  # TRANSCRIPT.labels.jsonl: voirdire view / review
        labels, source, random_labels = people
    else:
        labels, source, random_labels = _gold_labels(run, args)
        kind = "gold"
    boot = {"level": args.ci, "seed": args.ci_seed, "resamples": args.resamples}
    url = viewer_urls(args.viewer_url, args.transcript)
    c = calibrate(run, labels, source=source, random_labels=random_labels, url=url, kind=kind,
                  name=run.gold_name() if kind == "gold" else PEOPLE_SOURCE,
                  drawn=args.sample, **boot)  # fmt: skip
    sources = [c]
    gold = run.gold_labels() if kind == "people" else {}
    if gold:  # people's labels never replace the gold's section: both are printed, the gold's first
        sources.insert(0, calibrate(run, gold, source=f"{run.gold_name()} ({run.gold_statistic})", random_labels=None,
                                    url=url, kind="gold", name=run.gold_name(), **boot))  # fmt: skip
    if args.json:
        listed = [{"name": x.name, "kind": x.kind, "small": x.small, "calibration": json.loads(x.model_dump_json())}
                  for x in sources]  # fmt: skip
        payload = {**json.loads(c.model_dump_json()), "sources": listed}
        print(mask_secrets(json.dumps(payload, indent=1, ensure_ascii=False)))
    else:
        print(mask_secrets(shown("\n\n".join(x.text(limit=args.rows) for x in sources))))
    return 0


def viewer_urls(pattern: str | None, transcripts: list[Path]) -> Callable[[Judged], str | None] | None:
    """Each session's viewer address: from ``--viewer-url`` (a base address, or a pattern with ``{key}`` and
    ``{session}``), else from a viewer found on 127.0.0.1 at the default port serving every transcript by its name
    (the viewer's key for a file); None when there is neither."""
    if pattern is None:
        base = f"http://127.0.0.1:{VIEWER_PORT}/"
        if not all(_serves(base, p.name) for p in transcripts):
            return None
        pattern = base
    if "{session}" not in pattern:
        pattern = pattern.rstrip("/") + "/run/{key}/session/{session}"

    def url(s: Judged) -> str:
        return pattern.replace("{key}", url_quote(Path(s.path).name, safe="")).replace(
            "{session}", url_quote(s.session_id, safe="/")
        )

    return url


def _serves(base: str, key: str) -> bool:
    """Whether a viewer answers at ``base`` and knows a transcript by the name ``key`` (its version probe)."""
    probe = base + "api/version?" + urlencode({"page": "run", "key": key})
    try:
        with urllib.request.urlopen(probe, timeout=0.5) as response:  # a fixed 127.0.0.1 address
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _write_sample(run: Run, args: argparse.Namespace) -> int:
    from voirdire.certificate import label_words, sample_lines

    lines = sample_lines(run, args.sample, args.seed)
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    write_atomic(args.out, mask_secrets(text), "-o")
    words = ", ".join(sorted(label_words(run.decisions())))
    transcripts = " ".join(quote(str(t)) for t in args.transcript)
    print(
        f"wrote {len(lines)} items to label to {args.out} (drawn with --sample {args.sample} --seed {args.seed} "
        f"from {len(run.item_ids())} items, in random order); fill in each line's label ({words}) and run:\n"
        f"  voirdire calibrate {transcripts} --labels {quote(str(args.out))} --sample {args.sample} "
        f"--seed {args.seed}"
    )
    return 0


def _file_labels(run: Run, args: argparse.Namespace) -> tuple[dict[str, dict[str, bool]], str, str | None]:
    from voirdire.certificate import RANDOM_ASSUMPTION, LabelsError, draw_sample, label_words, read_labels

    known = {s.item_id for s in run.sessions}
    read = read_labels(args.labels, item_ids=known, words=label_words(run.decisions()))
    labels: dict[str, dict[str, bool]] = {}
    for label in read:
        labels.setdefault(label.item_id, {})[label.annotator] = label.accepted
    items = run.item_ids()
    if args.sample is not None:
        drawn = set(draw_sample(items, args.sample, args.seed))
        stray = next((x for x in read if x.item_id not in drawn), None)
        if stray is not None:
            raise LabelsError(
                f"{args.labels}:{stray.line}: item {stray.item_id!r} is not in the sample drawn by --sample "
                f"{args.sample} --seed {args.seed} from {run.path} (labels must be of the drawn items)"
            )
        missing = len(drawn) - len(labels)
        how = f"drawn by --sample {args.sample} --seed {args.seed}"
        if missing:
            how += f"; {missing} of the {len(drawn)} drawn items have no label, taken as missing at random"
        return labels, f"{args.labels}", how
    if args.labels_are_random:
        return labels, f"{args.labels}", "declared by --labels-are-random"
    if set(items) <= set(labels):
        return labels, f"{args.labels}", None
    raise LabelsError(
        f"{args.labels}: {len(set(items) & set(labels))} of the run's {len(items)} items are labelled, and not as a "
        f"sample voirdire drew: give the --sample N --seed S that drew them (voirdire calibrate {run.path} "
        f"--sample N --seed S -o to_label.jsonl), or --labels-are-random if they are a random sample (it assumes "
        f"{RANDOM_ASSUMPTION})"
    )


def _gold_labels(run: Run, args: argparse.Namespace) -> tuple[Mapping[str, Mapping[str, bool]], str, str | None]:
    from voirdire.certificate import draw_sample

    gold = run.gold_labels()
    if not gold:
        raise CalibrateOptionError(
            f"{run.path}: its verdicts record no gold label ({run.protocol or 'unknown protocol'}); give "
            f"--labels FILE, or draw items to label: voirdire calibrate {run.path} --sample 200 --seed 1 "
            "-o to_label.jsonl"
        )
    source = f"{run.gold_name()} ({run.gold_statistic})"
    if args.sample is None:
        return gold, source, None
    drawn = draw_sample(run.item_ids(), args.sample, args.seed)
    shown_gold = run.gold_labels(drawn)
    how = f"drawn by --sample {args.sample} --seed {args.seed}, the gold of every other item hidden"
    return shown_gold, f"{source}, {len(shown_gold)} sampled items", how
