"""``voirdire examine`` (and ``voirdire run cross_examination | ays | idk``): what LMvLM runs on and its options."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from voirdire.datasets import load_items
from voirdire.errors import VoirdireError
from voirdire.options import ParamsCLI
from voirdire.protocol import Protocol
from voirdire.registry import CommandSpec, Inputs

from .baselines import AreYouSure, IDontKnow
from .items import ClaimItem
from .protocol import CrossExamination, CrossExaminationParams


class InputError(VoirdireError, ValueError):
    """Inputs that do not fit together (a claim and a question file, or nothing to examine)."""


PARAMS = ParamsCLI(
    flags={"max_followup_rounds": "--max-followups"},
    negate={"one_question_at_a_time": "--batch-questions"},
    help={
        "prompt_set": "Table 1 setup prompt",
        "max_followup_rounds": "follow-up rounds cap (paper: 5)",
        "examinations": "examinations per claim (majority vote; 3 = LMvLM (Majority))",
        "one_question_at_a_time": "send each turn's questions together instead of one at a time",
    },
    title="cross-examination (§2, §4.1)",
)
BASELINES: dict[str | None, type[Protocol[Any, Any]]] = {None: CrossExamination, "ays": AreYouSure, "idk": IDontKnow}


def add_claim_inputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("claim", nargs="?", help="the claim to examine")
    p.add_argument("--question", help="the question the claim answers (or a fill-in-the-blank query with ____)")
    p.add_argument("--answer", action="append", default=[], help="a gold answer or alias (repeatable)")
    p.add_argument("--questions", type=Path, help="batch: JSONL/CSV/JSON of question, claim?, answers")


def add_examine_arguments(p: argparse.ArgumentParser) -> None:
    add_claim_inputs(p)
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


def examine_values(args: argparse.Namespace) -> Mapping[str, Any]:
    return {"examinations": 3} if getattr(args, "majority", False) else {}


def examine_protocol(args: argparse.Namespace, values: Mapping[str, Any]) -> Protocol[Any, Any]:
    return BASELINES[getattr(args, "baseline", None)](CrossExaminationParams.model_validate(dict(values)))


EXAMINE = CommandSpec(
    command="examine",
    help="cross-examine a claim or a dataset of questions (LMvLM)",
    description="The examiner questions the examinee about its claim (Cohen et al. 2023, §2) and decides whether "
    "the claim is correct; with --questions, every question of a dataset, scored against its gold answers.",
    params=PARAMS,
    add_arguments=add_examine_arguments,
    load_inputs=load_claims,
    values=examine_values,
    make_protocol=examine_protocol,
)
BASELINE = CommandSpec(params=PARAMS, add_arguments=add_claim_inputs, load_inputs=load_claims)
