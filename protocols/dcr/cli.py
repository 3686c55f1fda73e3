"""``voirdire dcr`` (and ``voirdire run dcr``): a reference and a candidate, or a benchmark of §4.1.

One pair prints the chat of the three agents (DCE's sentence verdicts, AMC's marks, RAI's rewrites), the score of
each round and the final candidate; a benchmark prints the report (Table 5, Fig. 4, the correlation of Tables 2-4).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from voirdire.kit import CommandSpec, ParamsCLI, Protocol, RunOutcome
from voirdire.kit.cli import InputError, Inputs, default_summary
from voirdire.kit.data import load_items

from . import plugin
from .data import LOADERS, DataError, load_benchmark
from .items import DCRItem
from .outcome import DCROutcome
from .protocol import Round

PARAMS = ParamsCLI(metavar={"rounds": "M"})
# §4.1: temperature 0 (greedy). The paper states no reply limit; 1024 is voirdire's: replies are JSON lists of
# reasons, which need more than the default 256 tokens.
ROLE_DEFAULTS = {"temperature": 0.0, "max_tokens": 1024}
ROLE_DEFAULT_SOURCES = {
    "temperature": "the paper's setting, §4.1",
    "max_tokens": "voirdire's choice, the paper states no limit: its JSON lists of reasons need more than 256",
}


def text_or_file(value: str, option: str = "--reference") -> str:
    """An option's text, or the contents of the file it names: a value is a file only when it names an existing
    file. The probe never raises: text of any length, with line breaks or characters no path may hold, is text."""
    try:
        named = "\n" not in value and Path(value).is_file()
    except (OSError, ValueError):  # a name too long for the file system, a NUL: no file by that name
        named = False
    if not named:
        return value
    try:
        return Path(value).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise InputError(f"{option} {value}: {why}") from None


def add_inputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("--reference", metavar="TEXT|FILE", help="the reference R (an article, a true answer, a context)")
    p.add_argument("--candidate", metavar="TEXT|FILE", help="the candidate C to evaluate and improve")
    p.add_argument(
        "--data",
        metavar="NAME|PATH",
        help=f"a benchmark ({', '.join(LOADERS)}) or a JSONL/CSV/JSON file of reference, candidate[, human, id]",
    )


def load_pairs(args: argparse.Namespace, protocol: Protocol[Any, Any]) -> Inputs:
    pair = args.reference is not None or args.candidate is not None
    if args.data and pair:
        raise InputError("--data: give either --reference and --candidate, or --data, not both")
    if args.data:
        offset, limit = args.offset or 0, args.limit
        if args.data in LOADERS:
            try:
                examples = load_benchmark(args.data)
            except DataError as exc:
                raise InputError(f"--data {args.data}: {exc}") from None
            chosen = examples[offset : offset + limit if limit is not None else None]
            out = Path("transcripts") / f"dcr-{args.data}.jsonl"  # a benchmark's name is its identity
            return Inputs(items=[e.item for e in chosen], dataset=args.data, out=out)
        items = load_items(Path(args.data), protocol.item_from_record, limit=limit, offset=offset)
        return Inputs(items=items, dataset=str(args.data))
    if args.reference is None or args.candidate is None:
        raise InputError(f"--{'candidate' if args.reference is not None else 'reference'}: give both "
                         "--reference and --candidate, or --data NAME|PATH")  # fmt: skip
    reference, candidate = text_or_file(args.reference, "--reference"), text_or_file(args.candidate, "--candidate")
    if not reference or not candidate:
        raise InputError(f"--{'reference' if not reference else 'candidate'}: empty text")
    return Inputs(items=[DCRItem.single(reference, candidate)], single=True)


def rounds_text(statistics: dict[str, Any]) -> str:
    """The score of each round and the final candidate, as printed after one pair's chat."""
    o = DCROutcome.model_validate(statistics)
    lines = []
    stray = {"not_in_candidate": " (not in the candidate: not scored)", "repeated": " (repeated: not scored)"}
    for h in (Round.model_validate(r) for r in o.history):
        lines.append(f"round {h.round}: score {'unscored' if h.score is None else f'{h.score:.3f}'}")
        marks = h.marks or []
        for i, g in enumerate(h.reasons):
            z = marks[i] if len(marks) == len(h.reasons) else None
            mark = "  " if z is None else ("+1" if z > 0 else "-1")
            why = stray.get(h.reason_status[i], "") if i < len(h.reason_status) else ""
            lines.append(f"  {mark} {g.sentence}{why}")
        minus = "  " if h.score is None else "-1"
        lines += [f"  {minus} {h.sentences[j]} (not evaluated)" for j in h.not_evaluated if j < len(h.sentences)]
    lines.append(f"final score {'unscored' if o.score is None else f'{o.score:.3f}'} ({o.stopped})")
    lines.append(("improved candidate: " if o.improved else "candidate: ") + o.candidate)
    lines += [f"lost ({g['how']}, round {g['round']}): {g['sentence']}" for g in o.lost]
    lines += [f"removed ({g['how']}, round {g['round']}): {g['sentence']}" for g in o.removed]
    lines += [f"warning: rewrote a consistent sentence (round {g['round']}): {g['before']} → {g['after']}"
              for g in o.rewrote_consistent]  # fmt: skip
    if o.amc_complete is False:
        lines.append("warning: the AMC array did not have one mark per reason: scored as returned, not accepted")
    if o.lost_sentences and (o.sentences_end or 0) < (o.sentences_start or 0):
        lines.append(f"the final candidate has {o.sentences_end} sentences, the original {o.sentences_start}")
    # Only an improvement that ran and was not scored: with no round run, the "last" candidate is the original.
    if o.unscored_candidate and statistics.get("rounds", 1) and o.unscored_candidate != o.candidate:
        lines.append(f"last improvement (not scored): {o.unscored_candidate}")
    return "\n".join(lines)


def summarize(o: RunOutcome) -> tuple[dict[str, Any], str]:
    """The core's summary (verdicts, report; the chat for one inline item), with the verdict's own evidence."""
    payload, text = default_summary(o)
    if not o.inputs.single:
        return payload, text
    session = o.session(o.result.session_ids[0])
    verdict = session.verdict if session is not None else None
    return payload, text + ("\n\n" + rounds_text(verdict.statistics) if verdict is not None else "")


DCR_COMMAND = CommandSpec(
    command=plugin.dcr.command,
    help=plugin.dcr.help,
    params=PARAMS,
    add_arguments=add_inputs,
    load_inputs=load_pairs,
    role_defaults=ROLE_DEFAULTS,
    role_default_sources=ROLE_DEFAULT_SOURCES,
    summarize=summarize,
)
