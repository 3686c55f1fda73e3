"""``voirdire review TRANSCRIPT --sample N``: the terminal reviewer. It walks the sample ``voirdire calibrate
--sample N --seed S`` draws (the viewer's review queue walks the same one), shows each session as a chat
(``voirdire show``'s rendering) and asks, at a prompt, whether the reviewer agrees with the verdict: ``a`` agree,
``d`` disagree (then the label they would give, when more than one differs), ``u`` unsure, ``s`` skip, ``q`` quit.
Each answer is one line of the labels sidecar, checked and written as the viewer writes it; items this annotator
labelled already are skipped."""

from __future__ import annotations

import argparse
import getpass
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from voirdire.base import VoirdireError, shown
from voirdire.cli.options import CLIError, at_least

if TYPE_CHECKING:
    from voirdire.web import ReviewRun

DEFAULT_SEED = 7  # the viewer's queue offers the same


def register(sub: Any) -> None:
    p = sub.add_parser(
        "review",
        help="label a random sample of a run's verdicts at the terminal (a agree, d disagree, u unsure); the labels "
        "go to TRANSCRIPT.labels.jsonl, which calibrate and report read",
    )
    p.add_argument("transcript", type=Path, metavar="TRANSCRIPT", help="a run's transcript (.jsonl)")
    p.add_argument("--sample", type=at_least(1), required=True, metavar="N", help="items in the sample")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, metavar="S",
                   help=f"the seed that draws the sample, as calibrate --seed (default {DEFAULT_SEED})")  # fmt: skip
    p.add_argument("--annotator", metavar="NAME", help="your name (default: asked at the prompt)")
    p.add_argument("--prompts", action="store_true", help="show every prompt in the chats")
    p.set_defaults(func=cmd_review)


def cmd_review(args: argparse.Namespace) -> int:
    from voirdire.transcript import MAX_NAME, current_labels, load_session, why_not_writable

    if not args.transcript.is_file():
        raise CLIError(f"{args.transcript}: no such transcript")
    why = why_not_writable(args.transcript)
    if why is not None:
        raise CLIError(f"{args.transcript}: labels cannot be written: {why}")
    # The viewer (starlette, jinja2) and the chat (rich): imported by this command, not by `voirdire --help`.
    from voirdire.chat import render
    from voirdire.web import review_run, review_summary

    rr = review_run(args.transcript)
    drawn = rr.sample(args.sample, args.seed)
    who = args.annotator or ask(f"your name (default {_user()}): ") or _user()
    if len(who) > MAX_NAME:
        raise CLIError(f"--annotator: longer than {MAX_NAME} characters")
    done = {item for item, name in current_labels(rr.labels()) if name == who}
    todo = [x for x in drawn if x["item_id"] not in done]
    print(f"{len(drawn) - len(todo)} / {len(drawn)} of --sample {args.sample} --seed {args.seed} labelled by {who}")
    for n, line in enumerate(todo, start=len(drawn) - len(todo) + 1):
        # no right/wrong against gold: it is what the label is compared with (EVOUNA's gold is a human label)
        print(render(load_session(args.transcript, line["session_id"]), session=line["session_id"],
                     prompts=args.prompts, gold=False))  # fmt: skip
        print(f"\n[{n} / {len(drawn)}] item {shown(line['item_id'])}")
        if not review_one(rr, args, who, line["session_id"]):
            break
    summary = review_summary(args.transcript)
    if summary:
        print(shown(summary))
    return 0


def review_one(rr: ReviewRun, args: argparse.Namespace, who: str, sid: str) -> bool:
    """Ask about one session and write the answer; False when the reviewer quits."""
    from voirdire.transcript import append_label
    from voirdire.web import LabelRefused

    judged = rr.judged(sid)
    others = [w for w, acc in sorted(rr.words.items()) if acc != judged.accepted]
    while True:
        answer = ask(f"verdict {judged.decision!r}: a agree, d disagree, u unsure, s skip, q quit> ").lower()
        if answer == "q":
            return False
        if answer == "s":
            return True
        if answer not in ("a", "d", "u"):
            print("answer a, d, u, s or q")
            continue
        label = ""
        if answer == "d":
            label = others[0] if len(others) == 1 else pick(others)
        comment = ask("comment (Enter for none)> ")
        reading = {"a": "agree", "d": "disagree", "u": "unsure"}[answer]
        form = {"session_id": sid, "reading": reading, "label": label, "annotator": who, "comment": comment,
                "sample": str(args.sample), "seed": str(args.seed)}  # fmt: skip
        try:
            append_label(args.transcript, rr.check(form))
        except LabelRefused as exc:
            print(f"not saved: {shown(exc)}")
            continue
        print(f"saved: {reading}{f' ({label})' if label else ''}")
        return True


def pick(words: list[str]) -> str:
    while True:
        for i, w in enumerate(words, start=1):
            print(f"  {i}. {shown(w)}")
        answer = ask("the label you would give (its number)> ")
        if answer.isdigit() and 1 <= int(answer) <= len(words):
            return words[int(answer) - 1]


def ask(prompt: str) -> str:
    try:
        return input(prompt).strip()
    except EOFError:
        raise VoirdireError("voirdire review: the input ended (no terminal to ask at)") from None


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return os.environ.get("USER", "reviewer")
