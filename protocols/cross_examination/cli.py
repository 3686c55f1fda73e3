"""``voirdire examine`` and ``voirdire run cross_examination | ays | idk``: what LMvLM examines."""

from __future__ import annotations

import argparse
from dataclasses import replace

from voirdire.kit import CommandSpec, ParamsCLI
from voirdire.kit.cli import ItemInputs, build_params

from . import plugin
from .baselines import AreYouSure, IDontKnow
from .items import ClaimItem
from .protocol import CrossExamination, CrossExaminationParams

PARAMS = ParamsCLI(
    flags={"max_followup_rounds": "--max-followups"}, negate={"one_question_at_a_time": "--batch-questions"}
)
CLAIMS = ItemInputs(ClaimItem, ("claim",), {"question": "--question", "answers": "--answer"}, data_flag="--questions",
                    data_help="batch: JSONL/CSV/JSON of question, claim?, answers",
                    build=lambda f: ClaimItem.single(f.get("claim"), f.get("question"), f.get("answers")))  # fmt: skip


def add_examine_arguments(p: argparse.ArgumentParser) -> None:
    CLAIMS.add_arguments(p)
    p.add_argument("--majority", action="store_true", help="LMvLM (Majority): three examinations, reject on 2")
    p.add_argument("--baseline", choices=["ays", "idk"], help="run a §4.1 baseline instead of the examination")


EXAMINE = CommandSpec(
    command=plugin.cross_examination.command,
    help=plugin.cross_examination.help,
    params=PARAMS,
    add_arguments=add_examine_arguments,
    load_inputs=CLAIMS.load,
    values=lambda args: {"examinations": 3} if args.majority else {},
    make_protocol=lambda args, values: {"ays": AreYouSure, "idk": IDontKnow}.get(args.baseline, CrossExamination)(
        build_params(CrossExaminationParams, PARAMS, values)
    ),
)
AYS = CommandSpec(help=plugin.ays.help, params=PARAMS, add_arguments=CLAIMS.add_arguments, load_inputs=CLAIMS.load)
IDK = replace(AYS, help=plugin.idk.help)
