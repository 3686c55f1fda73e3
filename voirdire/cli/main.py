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
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from pydantic import ValidationError

from voirdire import __version__, registry
from voirdire.base import VoirdireError, cannot_write, mask_secrets, shown
from voirdire.cli import calibrate, compare, export, labels, mcp, models, read, reproduce, review, web
from voirdire.cli.options import add_command


class Parsers(dict[str, argparse.ArgumentParser]):
    """A sub-command table's parsers by name, where a parser's options may wait (``fill``) until the parser is read:
    by argparse when its command is the one given, or by anything else that walks the table."""

    def __init__(self) -> None:
        super().__init__()
        self.fill: dict[str, Callable[[argparse.ArgumentParser], None]] = {}

    def filled(self, name: str) -> None:
        fill = self.fill.pop(name, None)
        if fill is not None:
            fill(super().__getitem__(name))

    def __getitem__(self, name: str) -> argparse.ArgumentParser:
        self.filled(name)
        return super().__getitem__(name)

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        self.filled(name)
        return super().get(name, default)

    def values(self) -> Any:
        for name in list(self.fill):
            self.filled(name)
        return super().values()

    def items(self) -> Any:
        for name in list(self.fill):
            self.filled(name)
        return super().items()


class LazyCommands(argparse._SubParsersAction):  # type: ignore[type-arg]
    """A sub-command table whose commands may fill their parsers when chosen (``add_lazy_parser``): a protocol's
    run command imports the protocol, its options and the runner only when it is the command given, so that
    ``voirdire --help`` and ``voirdire list`` show every command from its ``Card`` alone. The names and help lines
    are there from the start: the table's help, its choices and its errors read only them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._name_parser_map = self.choices = Parsers()

    def add_lazy_parser(
        self, name: str, fill: Callable[[argparse.ArgumentParser], None], **kwargs: Any
    ) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = self.add_parser(name, **kwargs)
        self._name_parser_map.fill[name] = fill
        return parser


class Parser(argparse.ArgumentParser):
    """argparse with voirdire's error style: ``--option: message`` (not ``argument --option: message``); its
    sub-command tables are ``LazyCommands``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.register("action", "parsers", LazyCommands)

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

    def add_protocol_command(
        self, sub: Any, name: str, reg: registry.Registration | registry.Card, *, help: str | None = None
    ) -> None:
        add_protocol_command(sub, name, reg, help=help)


def add_protocol_command(
    sub: Any, name: str, reg: registry.Registration | registry.Card, *, help: str | None = None
) -> None:
    """``reg``'s run command as ``name`` in ``sub``: its options filled from the registration when the command is
    chosen (``voirdire.cli.run``, imported then)."""
    card = reg if isinstance(reg, registry.Card) else registry.Card.of(reg)

    def fill(parser: argparse.ArgumentParser) -> None:
        from voirdire.cli.run import add_protocol_options

        add_protocol_options(parser, card.load())

    add_command(sub, name, fill, help=help or card.help)


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
    cards = registry.cards()

    rn = sub.add_parser("run", help="run any registered protocol (see `voirdire list`)")
    run_sub = rn.add_subparsers(dest="protocol", required=True, metavar="PROTOCOL")
    for name, card in cards.items():
        add_protocol_command(run_sub, name, card)
    for card in cards.values():
        if card.command:
            add_protocol_command(sub, card.command, card)
    # The core's own commands: each module's register(sub) adds its sub-commands.
    for module in (read, web, export, compare, calibrate, labels, review, reproduce, models, mcp):
        module.register(sub)
    for add_plugin_command in registry.command_plugins():  # commands protocol packages add beside their protocols'
        add_plugin_command(Commands(sub))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``voirdire`` command. Every error is one line on stderr, exit status 2 for what the user can fix
    (a ``VoirdireError``: a file and line, or an option) and 1 for a bug; ``voirdire --debug ...`` adds the
    traceback."""
    raw = list(argv) if argv is not None else sys.argv[1:]
    debug = bool(raw) and raw[0] == "--debug"
    try:
        parser = build_parser()
        args = parser.parse_args(argv)  # fills the chosen protocol's options: its registration is imported here
    except VoirdireError as exc:  # a protocol plugin that cannot be loaded
        return _error(str(exc), debug)
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
