"""``voirdire check-entities "<sentence>"`` (and ``voirdire run oracle_entities``): one sentence, or a dataset
(``--data docred|PATH``). One sentence prints the chat (every oracle query, the checker's draws) and the verdict
with its evidence and the Theorem 3.1–3.2 guarantee; a dataset prints the report (Fig. 6, Table 1).

``voirdire check-paraphrase "<s1>" "<s2>"`` (``voirdire run oracle_paraphrase``, ``--data msrp|PATH``) likewise.

A ``CommandSpec`` gives each protocol its one command word (``check-entities``, ``check-paraphrase``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from voirdire.kit import CommandSpec, ParamsCLI, Protocol, RunOutcome
from voirdire.kit.cli import InputError, Inputs, default_summary
from voirdire.kit.data import load_items

from . import plugin
from .data import DataError, docred_sentences, msrp_pairs
from .items import SentenceItem

PARAMS = ParamsCLI(metavar={"samples": "K", "tests": "N", "epsilons": "EPS,..."})
# The paper samples every query k times for its votes and does not state a temperature: GPT-3.5's API default, 1.0.
ROLE_DEFAULTS = {"temperature": 1.0}
ROLE_DEFAULT_SOURCES = {"temperature": "voirdire's choice, the paper states none: GPT-3.5's API default"}


def add_inputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("sentence", nargs="?", help="the sentence s whose entity extraction is checked")
    p.add_argument("--data", metavar="docred|PATH", help="Re-DocRED dev sentences, or a JSONL/CSV/JSON file of text")


def load_sentences(args: argparse.Namespace, protocol: Protocol[Any, Any]) -> Inputs:
    if args.data and args.sentence:
        raise InputError("give either SENTENCE or --data, not both")
    offset, limit = args.offset or 0, args.limit
    if args.data == "docred":
        try:
            items = docred_sentences()
        except DataError as exc:
            raise InputError(f"--data docred: {exc}") from None
        chosen = items[offset : offset + limit if limit is not None else None]
        return Inputs(items=chosen, dataset="docred", out=Path("transcripts") / "oracle_entities-docred.jsonl")
    if args.data:
        return Inputs(items=load_items(Path(args.data), protocol.item_from_record, limit=limit, offset=offset),
                      dataset=str(args.data))  # fmt: skip
    if not args.sentence or not args.sentence.strip():
        raise InputError("give SENTENCE, or --data docred|PATH")
    return Inputs(items=[SentenceItem(text=args.sentence)], single=True)


def summarize(o: RunOutcome) -> tuple[dict[str, Any], str]:
    """The core's summary (verdicts, report; the chat for one inline item). The chat already ends with the verdict
    and its evidence (the oracle's reply among it), so they are not printed a second time after it."""
    return default_summary(o)


ENTITIES_COMMAND = CommandSpec(
    command=plugin.oracle_entities.command,
    help=plugin.oracle_entities.help,
    params=PARAMS,
    add_arguments=add_inputs,
    load_inputs=load_sentences,
    role_defaults=ROLE_DEFAULTS,
    role_default_sources=ROLE_DEFAULT_SOURCES,
    summarize=summarize,
)


def add_pair(p: argparse.ArgumentParser) -> None:
    p.add_argument("sentence1", nargs="?", help="s1")
    p.add_argument("sentence2", nargs="?", help="s2")
    p.add_argument(
        "--data", metavar="msrp|PATH", help="MSRP test pairs, or a JSONL/CSV/JSON file of sentence1, sentence2"
    )


def load_pairs(args: argparse.Namespace, protocol: Protocol[Any, Any]) -> Inputs:
    from .paraphrase import PairItem

    if args.data and (args.sentence1 or args.sentence2):
        raise InputError("give either SENTENCE1 SENTENCE2 or --data, not both")
    offset, limit = args.offset or 0, args.limit
    if args.data == "msrp":
        try:
            pairs = msrp_pairs()
        except DataError as exc:
            raise InputError(f"--data msrp: {exc}") from None
        chosen = [PairItem(**p) for p in pairs[offset : offset + limit if limit is not None else None]]
        return Inputs(items=chosen, dataset="msrp", out=Path("transcripts") / "oracle_paraphrase-msrp.jsonl")
    if args.data:
        return Inputs(items=load_items(Path(args.data), protocol.item_from_record, limit=limit, offset=offset),
                      dataset=str(args.data))  # fmt: skip
    if not args.sentence1 or not args.sentence2:
        raise InputError("give SENTENCE1 and SENTENCE2, or --data msrp|PATH")
    return Inputs(items=[PairItem(sentence1=args.sentence1, sentence2=args.sentence2)], single=True)


PARAPHRASE_COMMAND = CommandSpec(
    command=plugin.oracle_paraphrase.command,
    help=plugin.oracle_paraphrase.help,
    params=ParamsCLI(),
    add_arguments=add_pair,
    load_inputs=load_pairs,
    role_defaults=ROLE_DEFAULTS,
    role_default_sources=ROLE_DEFAULT_SOURCES,
    summarize=summarize,
)
