"""``voirdire examine`` and ``voirdire run cross_examination | ays | idk``: what LMvLM examines."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from voirdire.datasets import load_items
from voirdire.options import ParamsCLI, build_params
from voirdire.protocol import Protocol
from voirdire.registry import CommandSpec, InputError, Inputs

from .baselines import AreYouSure, IDontKnow
from .items import ClaimItem
from .protocol import CrossExamination, CrossExaminationParams

PARAMS = ParamsCLI(
    flags={"max_followup_rounds": "--max-followups"}, negate={"one_question_at_a_time": "--batch-questions"}
)


def add_inputs(p: argparse.ArgumentParser, *, variants: bool = True) -> None:
    p.add_argument("claim", nargs="?", help="the claim to examine")
    p.add_argument("--question", help="the question the claim answers (or a fill-in-the-blank query with ____)")
    p.add_argument("--answer", action="append", default=[], help="a gold answer or alias (repeatable)")
    p.add_argument("--questions", type=Path, help="batch: JSONL/CSV/JSON of question, claim?, answers")
    if variants:
        p.add_argument("--majority", action="store_true", help="LMvLM (Majority): three examinations, reject on 2")
        p.add_argument("--baseline", choices=["ays", "idk"], help="run a §4.1 baseline instead of the examination")


def load_claims(args: argparse.Namespace, protocol: Protocol[Any, Any]) -> Inputs:
    if args.questions and (args.claim or args.question):
        raise InputError("give either a CLAIM (or --question) or --questions FILE, not both")
    if args.questions:
        items = load_items(args.questions, protocol.item_from_record, limit=args.limit, offset=args.offset)
        return Inputs(items=items, dataset=str(args.questions))
    if not (args.claim or args.question):
        raise InputError("give a CLAIM, --question, or --questions FILE")
    return Inputs(items=[ClaimItem.single(args.claim, args.question, args.answer)], single=True)


EXAMINE = CommandSpec(
    command="examine",
    help="cross-examine a claim or a dataset of questions (LMvLM)",
    params=PARAMS,
    add_arguments=add_inputs,
    load_inputs=load_claims,
    values=lambda args: {"examinations": 3} if args.majority else {},
    make_protocol=lambda args, values: {"ays": AreYouSure, "idk": IDontKnow}.get(args.baseline, CrossExamination)(
        build_params(CrossExaminationParams, PARAMS, values)
    ),
)
BASELINE = CommandSpec(params=PARAMS, add_arguments=lambda p: add_inputs(p, variants=False), load_inputs=load_claims)
