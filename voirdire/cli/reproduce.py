"""``voirdire reproduce``: the papers' tables and figures the installed protocols declare (``analysis.reproduce``)."""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from voirdire.cli.options import CLIError, at_least

EXAMPLES = "paper-examples"  # the core's own reproduction: every protocol's worked examples (``analysis.examples``)
WHAT = "every worked example the papers print with their models' replies, replayed through its protocol"

if TYPE_CHECKING:
    pass


def register(sub: Any) -> None:
    p = sub.add_parser(
        "reproduce",
        help="reproduce a paper's table or figure: the paper's numbers beside ours (--list names them)",
        description="Runs one of the papers' tables or figures that the installed protocols declare, prints the "
        "paper's numbers beside ours with the difference and the tolerance, and writes OUT/NAME.json and the "
        "figures (OUT/NAME-*.svg, with matplotlib).",
    )
    p.add_argument("name", nargs="?", help="what to reproduce (see --list)")
    p.add_argument("--list", action="store_true", help="every table and figure, what it needs and its command")
    p.add_argument("--offline", action="store_true", help="run every offline one in turn, then a summary line each")
    p.add_argument("--model", action="append", default=[], metavar="ROLE=SPEC",
                   help="the model for a role (a bare SPEC: every role); the model reproductions need it")  # fmt: skip
    p.add_argument("--out", type=Path, default=Path("reproductions"), metavar="DIR",
                   help="where NAME.json, the figures and any transcripts go (default: ./reproductions)")  # fmt: skip
    p.add_argument("--limit", type=at_least(1), help="items for a model reproduction (default 20); trials for a "
                   "simulation")  # fmt: skip
    p.add_argument("--seeds", type=at_least(1), help="seeds 0..N-1 for a seeded table (default 10)")
    p.add_argument("--data-dir", type=Path, metavar="DIR", help="the shared data folder (default: found by the repo)")
    p.add_argument("--format", action="append", choices=["svg", "png"], dest="formats",
                   help="figure format (repeatable; default svg)")  # fmt: skip
    p.add_argument("--no-figures", action="store_true", help="write the JSON only")
    p.add_argument("--json", action="store_true", help="print the JSON instead of the table")
    p.add_argument("--example", metavar="NAME", help="paper-examples: replay one example and print it as a chat "
                   "(its name, or the end of it: table-13)")  # fmt: skip
    p.set_defaults(func=cmd_reproduce, commands=sub.choices)


def command_runner(commands: dict[str, argparse.ArgumentParser]) -> Callable[[list[str]], str]:
    """Runs ``voirdire ARGV`` in this process through the parsers of this ``voirdire`` (what a model reproduction
    runs); returns its output, or raises a one-line error."""
    from voirdire.reports import ReproductionError


    def run_command(argv: list[str]) -> str:
        buf = io.StringIO()
        try:
            ns = commands[argv[0]].parse_args([*argv[1:], "--no-progress"])
            ns.argv = ["voirdire", *argv]
            with contextlib.redirect_stdout(buf):
                code = int(ns.func(ns) or 0)
        except SystemExit as exc:  # the command's own parser refused the arguments (printed on stderr)
            code = int(exc.code or 2)
        if code != 0:
            raise ReproductionError(f"voirdire {' '.join(argv[:3])} ... exited with status {code}")
        return buf.getvalue()

    return run_command


def models(specs: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for spec in specs:
        role, sep, model = spec.partition("=")
        if not sep:
            role, model = "*", spec
        if not role or not model:
            raise CLIError(f"--model {spec}: give ROLE=SPEC (or a bare SPEC for every role)")
        out[role] = model
    return out


def cmd_reproduce(args: argparse.Namespace) -> int:
    from voirdire.analysis import check, get, listing, reproductions  # imported by this command, not by --help
    from voirdire.reports import Options

    if args.list:
        print(listing())
        print(f"\n  {EXAMPLES:<26} {WHAT}\n  {'':<26} needs: offline (data and code only); takes seconds")
        print(f"  {'':<26} $ voirdire reproduce {EXAMPLES}  (one, as a chat: --example NAME)")
        print(f"\n{len(reproductions())} tables and figures; run one with: voirdire reproduce NAME")
        return 0
    if args.name == EXAMPLES or args.example:
        if args.name not in (None, EXAMPLES):
            raise CLIError(f"--example: replays one of the paper examples; give no NAME, or {EXAMPLES}")
        return _paper_examples(args)
    if args.name and not args.offline:  # a missing model is said before anything is made
        check(get(args.name), Options(models=models(args.model)))
    if args.name or args.offline:  # before minutes of work: where it all goes must be writable
        try:
            args.out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CLIError(f"--out {args.out}: cannot create the folder ({exc.strerror})") from None
    if args.offline:
        if args.name:
            raise CLIError("--offline: runs every offline reproduction; give no NAME with it")
        names = [name for name, r in reproductions().items() if r.needs == "offline"]
        summary = [_one(args, name) for name in names]
        summary.append(_paper_examples(args, quiet=False))
        print("\n".join(["", "summary:", *summary]))
        return 0
    if not args.name:
        raise CLIError("reproduce: name what to reproduce, or --list")
    _one(args, args.name)
    return 0


def _paper_examples(args: argparse.Namespace, quiet: bool = True) -> Any:
    """``reproduce paper-examples``: every example (the table), or ``--example NAME`` (its chat and its row)."""
    from voirdire.analysis import examples, examples_table, find, run_examples, unprinted, write_examples
    from voirdire.chat import render
    from voirdire.transcript import load

    found = examples()
    chosen = [find(args.example, found)] if args.example else list(found.values())
    folder = args.out / EXAMPLES
    outcomes = run_examples(chosen, folder)
    path = write_examples(outcomes, args.out / f"{EXAMPLES}{'-' + chosen[0].name if args.example else ''}.json")
    if args.json:
        print(path.read_text(encoding="utf-8"), end="")
    else:
        if args.example:
            (o,) = outcomes
            ex = o.example
            print(f"{ex.name}: {ex.paper}, {ex.where} ({ex.models}); its replies, as the paper prints them\n")
            print(render(load(o.transcript)))
            supplied = unprinted(ex)
            if supplied:
                print("\nnot printed by the paper, supplied by the example file:")
                print("\n".join(f"  {line}" for line in supplied))
            print()
        print(f"{EXAMPLES}: {WHAT}\n")
        print(examples_table(outcomes))
    print(f"wrote {path} and the transcripts in {folder}", file=sys.stderr)
    agree = sum(o.agrees for o in outcomes)
    line = f"  {EXAMPLES}: {agree} of {len(outcomes)} agree with the paper's conclusion"
    return 0 if quiet else line


def _one(args: argparse.Namespace, name: str) -> str:
    from voirdire.analysis import get, run, text, write
    from voirdire.reports import Options

    """Runs one reproduction, prints it and writes its files; its one-line summary."""
    rep = get(name)
    options = Options(
        models=models(args.model), data_dir=args.data_dir, limit=args.limit, seeds=args.seeds,
        out=args.out / "transcripts" if rep.needs != "offline" else None, command=command_runner(args.commands),
    )  # fmt: skip
    outcome, seconds = run(rep, options)
    path, figures, missing = write(
        rep, outcome, options, args.out, seconds=seconds, formats=tuple(args.formats or ["svg"]),
        figures=not args.no_figures,
    )  # fmt: skip
    if args.json:
        print(path.read_text(encoding="utf-8"), end="")
    else:
        print(text(rep, outcome, seconds))
    print(f"wrote {path}" + "".join(f", {f}" for f in figures), file=sys.stderr)
    if missing:
        print(f"no figures: {missing}", file=sys.stderr)
    judged = [cell for cell in outcome.cells if cell.within is not None]
    held = sum(bool(cell.within) for cell in judged)
    how = outcome.summary or f"{held} of {len(judged)} compared cells within tolerance"
    return f"  {rep.name}: {how} ({seconds:.0f} s)"
