"""The ``voirdire`` command: one sub-command per protocol, plus ``show`` and ``report`` for transcripts."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from voirdire import __version__
from voirdire.datasets import DatasetError, load_items
from voirdire.models import ModelSpecError, RoleSettings, load_role_config, mask_secrets, parse_spec
from voirdire.prompts import PromptError
from voirdire.runner import ResumeError, RunResult, default_out, run_protocol
from voirdire.transcript import TranscriptError, load
from voirdire.view import SessionNotFound, render, summary_line

_SUBCOMMAND_MODULES: tuple[str, ...] = ("voirdire.cli_qa", "voirdire.cli_nodata")


class CLIError(Exception):
    pass


# ----------------------------------------------------------------------------------------- shared options


def add_model_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("models (any role can be any model)")
    g.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="ROLE=SPEC",
        help="bind a role to a model spec: local | local:FILE.gguf | openai:MODEL | "
        "openai-compatible:MODEL@URL | scripted:FILE | human; a bare SPEC binds every role (repeatable)",
    )
    g.add_argument("--config", type=Path, help="TOML run config with [roles.NAME] model/temperature/max_tokens/seed")
    g.add_argument("--max-tokens", type=int, help="bound every reply (default 256)")
    g.add_argument("--temperature", type=float, help="sampling temperature for every role (default 0: greedy)")
    g.add_argument("--seed", type=int, help="sampling seed for every role")


def add_run_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("run")
    g.add_argument("--out", type=Path, help="transcript file (JSONL); a batch resumes it if it exists")
    g.add_argument("--fresh", action="store_true", help="overwrite --out instead of resuming it")
    g.add_argument("--concurrency", type=int, default=1, help="sessions at a time (default 1)")
    g.add_argument("--limit", type=int, help="first N items of the dataset")
    g.add_argument("--offset", type=int, default=0, help="skip the first N items")
    g.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    g.add_argument("--report", type=Path, help="also write the metrics report as JSON here")
    g.add_argument("--no-progress", action="store_true", help="no progress bar")
    g.add_argument("--cache", type=Path, help="JSONL cache of model replies: identical deterministic calls are reused")


def roles_from_args(args: argparse.Namespace) -> dict[str, RoleSettings]:
    """Role bindings from ``--config``, then ``--model`` (a bare SPEC rebinds every role), then the global
    ``--max-tokens``/``--temperature``/``--seed``, each validated like the config file."""
    roles: dict[str, RoleSettings] = load_role_config(args.config) if args.config else {}

    def updated(settings: RoleSettings, **changes: object) -> RoleSettings:
        try:
            return RoleSettings.model_validate({**settings.model_dump(), **changes})
        except ValidationError as exc:
            problem = "; ".join(f"{e['loc'][0]}: {e['msg']}" for e in exc.errors(include_url=False))
            raise CLIError(f"bad model setting: {problem}") from None

    for entry in args.model:
        role, sep, spec = entry.partition("=")
        if not sep:
            role, spec = "*", entry
        parse_spec(spec)
        if role == "*":
            roles = {r: updated(s, model=spec) for r, s in roles.items()}
        roles[role] = updated(roles.get(role) or roles.get("*") or RoleSettings(), model=spec)
    overrides = {
        k: v
        for k, v in (("max_tokens", args.max_tokens), ("temperature", args.temperature), ("seed", args.seed))
        if v is not None
    }
    if overrides:
        roles.setdefault("*", RoleSettings())
        roles = {r: updated(s, **overrides) for r, s in roles.items()}
    return roles


def run(
    protocol: Any,
    items: Sequence[Any],
    args: argparse.Namespace,
    out: Path,
    dataset: str | None,
    roles: dict[str, RoleSettings] | None = None,
) -> RunResult:
    """Run ``protocol`` with the shared run options; ``roles`` replaces the roles built from the flags."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        result = asyncio.run(
            run_protocol(
                protocol,
                items,
                out=out,
                roles=roles if roles is not None else roles_from_args(args),
                concurrency=args.concurrency,
                resume=not args.fresh,
                progress=not (args.no_progress or args.json),
                dataset=dataset,
                command=[mask_secrets(a) for a in getattr(args, "argv", sys.argv)],
                seed=args.seed,
                cache=args.cache,
            )
        )
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    return result


# ----------------------------------------------------------------------------------------- examine


def cmd_examine(args: argparse.Namespace) -> int:
    from voirdire.protocols.cross_examination import (
        AreYouSure,
        ClaimItem,
        CrossExamination,
        CrossExaminationParams,
        format_report,
        score,
    )

    params = CrossExaminationParams(
        prompt_set=args.prompt_set,
        max_followup_rounds=args.max_followups,
        examinations=3 if args.majority else args.examinations,
        one_question_at_a_time=not args.batch_questions,
    )
    cls = {"ays": AreYouSure, None: CrossExamination}.get(args.baseline)
    if args.baseline == "idk":
        from voirdire.protocols.cross_examination import IDontKnow

        cls = IDontKnow
    protocol = cls(params)
    if args.questions and (args.claim or args.question):
        raise CLIError("give either a CLAIM (or --question) or --questions FILE, not both")
    if args.questions:
        items = load_items(args.questions, protocol.item_from_record, limit=args.limit, offset=args.offset)
        dataset: str | None = str(args.questions)
    else:
        if not (args.claim or args.question):
            raise CLIError("give a CLAIM, --question, or --questions FILE")
        items = [ClaimItem.single(args.claim, args.question, args.answer)]
        dataset = None
    out = args.out or default_out(protocol.name, args.questions)
    result = run(protocol, items, args, out, dataset)
    transcript = load(out)
    report = score(transcript.sessions[s] for s in result.session_ids if s in transcript.sessions)
    payload = {
        **run_summary(result, out),
        "verdicts": {
            k: v.model_dump(mode="json", include={"decision", "accepted", "evidence", "statistics"})
            for k, v in result.verdicts.items()
        },
        "report": report.model_dump(mode="json", exclude={"rows"}),
    }
    if args.questions:
        return finish(args, result, payload, format_report(report))
    chat = render(transcript, session=result.session_ids[0])
    return finish(args, result, payload, chat, timing=False)


def run_summary(result: RunResult, out: Path) -> dict[str, Any]:
    """The fields every run command's --json output starts with."""
    return {
        "transcript": str(out),
        "run_id": result.run_id,
        "elapsed_s": result.elapsed_s,
        "skipped": result.skipped,
        "errors": result.errors,
        "warnings": result.warnings,
    }


def finish(args: argparse.Namespace, result: RunResult, payload: dict[str, Any], text: str, timing: bool = True) -> int:
    """The shared end of a run command: ``--report`` file, ``--json`` or the text, run time, session errors.

    Exit status 1 only when every session failed: partial failures are in the transcript and on stderr.
    """
    if args.report:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text(json.dumps(payload, indent=2, ensure_ascii=False))
    if args.json:
        print(json.dumps(payload, indent=2, ensure_ascii=False))
    else:
        print(text)
        if timing:
            ran = len(result.session_ids) - result.skipped
            print(f"time: {result.elapsed_s:.1f}s for {ran} sessions ({result.skipped} resumed from the transcript)")
        print(f"{'' if timing else chr(10)}transcript: {result.out}")
    for sid, err in result.errors.items():
        print(f"error in {sid}: {err}", file=sys.stderr)
    return 1 if result.errors and not result.verdicts else 0


# ----------------------------------------------------------------------------------------- show / report


def cmd_show(args: argparse.Namespace) -> int:
    t = load(args.transcript)
    if args.list:
        for s in t.sessions.values():
            print(summary_line(s))
        return 0
    if args.json:
        if args.session and args.session not in t.sessions:
            raise SessionNotFound(f"{t.path}: no session {args.session!r}")
        chosen = [t.sessions[args.session]] if args.session else list(t.sessions.values())
        print(json.dumps([s.model_dump(mode="json") for s in chosen], indent=2))
        return 0
    print(render(t, session=args.session, prompts=args.prompts))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from voirdire.protocols.cross_examination import format_report, score

    t = load(args.transcript)
    protocol = t.header.protocol if t.header else "cross_examination"
    report = score(t.sessions.values(), protocol=protocol)
    print(report.model_dump_json(indent=2) if args.json else format_report(report))
    return 0


# ----------------------------------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="voirdire",
        description="LLM agents that examine, prove and verify each other's answers before anyone trusts them.",
    )
    parser.add_argument("--version", action="version", version=f"voirdire {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    ex = sub.add_parser("examine", help="cross-examine a claim or a dataset of questions (LMvLM)")
    ex.add_argument("claim", nargs="?", help="the claim to examine")
    ex.add_argument("--question", help="the question the claim answers (or a fill-in-the-blank query with ____)")
    ex.add_argument("--answer", action="append", default=[], help="a gold answer or alias (repeatable)")
    ex.add_argument("--questions", type=Path, help="batch: JSONL/CSV/JSON of question, claim?, answers")
    ex.add_argument("--majority", action="store_true", help="LMvLM (Majority): three examinations, reject on 2")
    ex.add_argument("--examinations", type=int, default=1, help="examinations per claim (majority vote)")
    ex.add_argument("--baseline", choices=["ays", "idk"], help="run a §4.1 baseline instead of the examination")
    ex.add_argument("--prompt-set", choices=["chatgpt", "gpt3"], default="chatgpt", help="Table 1 setup prompt")
    ex.add_argument("--max-followups", type=int, default=5, help="follow-up rounds cap (paper: 5)")
    ex.add_argument(
        "--batch-questions",
        action="store_true",
        help="send each turn's questions together instead of one at a time",
    )
    add_model_options(ex)
    add_run_options(ex)
    ex.set_defaults(func=cmd_examine)

    sh = sub.add_parser("show", help="render a transcript as a chat")
    sh.add_argument("transcript", type=Path)
    sh.add_argument("--session", help="only this session id")
    sh.add_argument("--prompts", action="store_true", help="also show the prompts the moderator sent")
    sh.add_argument("--list", action="store_true", help="one line per session")
    sh.add_argument("--json", action="store_true", help="sessions as JSON")
    sh.set_defaults(func=cmd_show)

    rp = sub.add_parser("report", help="metrics of a cross-examination transcript against its gold answers")
    rp.add_argument("transcript", type=Path)
    rp.add_argument("--json", action="store_true")
    rp.set_defaults(func=cmd_report)

    # Protocols whose sub-commands live in their own CLI module, each with register(subparsers).
    for module in _SUBCOMMAND_MODULES:
        importlib.import_module(module).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = ["voirdire", *argv] if argv is not None else sys.argv  # recorded (masked) in the run header
    try:
        return int(args.func(args) or 0)
    except ValidationError as exc:  # a parameter out of range, e.g. an even number of examinations
        print(f"voirdire: error: {exc.errors(include_url=False)[0]['msg']}", file=sys.stderr)
        return 2
    except (CLIError, DatasetError, ModelSpecError, PromptError, ResumeError, TranscriptError) as exc:
        print(f"voirdire: error: {exc}", file=sys.stderr)
        return 2
    except SessionNotFound as exc:
        print(f"voirdire: error: {exc.args[0]}", file=sys.stderr)
        return 2
    except OSError as exc:  # an unwritable --out, a folder given as a file, ...
        print(f"voirdire: error: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), file=sys.stderr)
        return 2
    except BrokenPipeError:  # `voirdire show ... | head`: the reader left early, which is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print(
            "voirdire: interrupted; finished sessions are in the transcript (re-run to resume)",
            file=sys.stderr,
        )
        return 130


if __name__ == "__main__":
    sys.exit(main())
