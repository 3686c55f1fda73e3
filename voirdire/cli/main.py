"""The ``voirdire`` parser and its exit statuses.

The sub-commands come from the registry (a run command per protocol and per friendly name, ``voirdire.cli.run``),
from the read commands (``voirdire.cli.read``, ``voirdire.cli.web``) and from the ``voirdire.commands`` entry
points of protocol packages.
"""

from __future__ import annotations

import argparse
import errno
import os
import re
import sys
import traceback
from collections.abc import Sequence
from typing import Any, NoReturn

from pydantic import ValidationError

from voirdire import __version__, registry
from voirdire.base import VoirdireError, cannot_write, mask_secrets, shown
from voirdire.cli import calibrate, compare, export, labels, mcp, models, read, reproduce, review, run, web


class Parser(argparse.ArgumentParser):
    """argparse with voirdire's error style: ``--option: message`` (not ``argument --option: message``)."""

    def error(self, message: str) -> NoReturn:
        message = re.sub(r"^argument ([^:]+): ", lambda m: f"{m.group(1).split('/')[-1]}: ", message)
        self.exit(2, f"{self.prog}: error: {message}\n(`{self.prog} --help` lists the options)\n")


class Commands:
    """The sub-command table as a ``voirdire.commands`` plugin sees it (``registry.CommandTable``)."""

    def __init__(self, sub: Any) -> None:
        self._sub = sub

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = self._sub.add_parser(name, **kwargs)
        return parser

    def add_protocol_command(self, sub: Any, name: str, reg: registry.Registration, *, help: str | None = None) -> None:
        run.add_protocol_command(sub, name, reg, help=help)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="voirdire",
        description="LLM agents that examine, prove and verify each other's answers before anyone trusts them.",
    )
    parser.add_argument("--version", action="version", version=f"voirdire {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="show the traceback of an error (before the command: voirdire --debug ...)"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    regs = registry.registrations()

    rn = sub.add_parser("run", help="run any registered protocol (see `voirdire list`)")
    run_sub = rn.add_subparsers(dest="protocol", required=True, metavar="PROTOCOL")
    for name, reg in regs.items():
        run.add_protocol_command(run_sub, name, reg)
    for reg in regs.values():
        if reg.cli.command:
            run.add_protocol_command(sub, reg.cli.command, reg)
    # The core's own commands: each module's register(sub) adds its sub-commands.
    for module in (read, web, export, compare, calibrate, labels, review, reproduce, models, mcp):
        module.register(sub)
    for add_command in registry.command_plugins():  # commands protocol packages add beside their protocols' own
        add_command(Commands(sub))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``voirdire`` command. Every error is one line on stderr, exit status 2 for what the user can fix
    (a ``VoirdireError``: a file and line, or an option) and 1 for a bug; ``voirdire --debug ...`` adds the
    traceback."""
    raw = list(argv) if argv is not None else sys.argv[1:]
    debug = bool(raw) and raw[0] == "--debug"
    try:
        parser = build_parser()
    except VoirdireError as exc:  # a protocol plugin that cannot be loaded
        return _error(str(exc), debug)
    args = parser.parse_args(argv)
    args.argv = ["voirdire", *argv] if argv is not None else sys.argv  # recorded (masked) in the run header
    debug = args.debug
    try:
        return int(args.func(args) or 0)
    except VoirdireError as exc:
        return _error(str(exc), debug, status=getattr(exc, "exit_status", 2))
    except ValidationError as exc:  # a parameter a protocol validates in code
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) + ': ' if e['loc'] else ''}{e['msg']}"
            for e in exc.errors(include_url=False)
        )
        return _error(problems, debug)
    except BrokenPipeError:  # `voirdire show ... | head`: the reader left early, which is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("voirdire: interrupted; finished sessions are in the transcript (re-run to resume)", file=sys.stderr)
        return 130
    except OSError as exc:  # a file that vanished or filled the disk mid-run, ...
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):  # the one full-disk behaviour (voirdire.base.errors.CannotWrite)
            full = cannot_write(exc, exc.filename or "a file", "writing")
            return _error(str(full), debug, status=full.exit_status)
        return _error(f"{exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), debug)
    except Exception as exc:  # a bug: one line, and where to look
        return _error(
            f"internal error: {type(exc).__name__}: {exc} (a bug in voirdire or a protocol plugin; "
            "`voirdire --debug ...` shows the traceback)",
            debug,
            status=1,
        )


def _error(message: str, debug: bool, *, status: int = 2) -> int:
    """Print ``voirdire: error: message`` (masked), after the traceback when ``--debug`` asked for it."""
    if debug:
        print(shown(mask_secrets(traceback.format_exc()).rstrip()), file=sys.stderr)
    print(f"voirdire: error: {shown(mask_secrets(message))}", file=sys.stderr)  # a message may quote a file
    return status
