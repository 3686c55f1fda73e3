"""The protocol registry: every protocol, built-in or third-party, registers through one entry-point group.

A protocol package exposes a ``Registration`` (its ``Protocol`` class, its report, how it appears on the command
line) and names it in its distribution's metadata::

    [project.entry-points."voirdire.protocols"]
    my_protocol = "my_package.plugin:registration"

The core finds it there and imports nothing else of it, so adding a protocol touches no file of voirdire.
"""

from __future__ import annotations

import argparse
import importlib.metadata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from voirdire.errors import VoirdireError
from voirdire.options import ParamsCLI
from voirdire.protocol import Protocol
from voirdire.report import Report, ReportFold, as_fold
from voirdire.transcript import Transcript

ENTRY_POINT_GROUP = "voirdire.protocols"
# Commands a protocol package adds beside its protocols' own (DCR's ``correlate``): each entry point names a
# function that adds one sub-command to the ``voirdire`` parser.
COMMANDS_GROUP = "voirdire.commands"


class RegistryError(VoirdireError, LookupError):
    """An unknown protocol name, or a plugin that cannot be loaded."""


class InputError(VoirdireError, ValueError):
    """What to run on is missing, or given twice; the message names the option."""


@dataclass(frozen=True)
class Inputs:
    """What a command runs on: the items, the dataset they came from, and the default transcript path."""

    items: Sequence[BaseModel]
    dataset: str | None = None
    out: Path | None = None
    single: bool = False  # one item given inline: print its chat rather than a report


@dataclass(frozen=True)
class CommandSpec:
    """How a protocol appears on the command line (``voirdire run NAME`` and its friendly ``command``).

    ``params`` maps the protocol's ``Params`` to options. ``add_arguments`` adds the options that are not
    parameters (what to run on); ``load_inputs`` reads them (default: ``--data FILE`` or ``--item JSON``).
    ``values`` adds parameter values derived from other options; ``make_protocol`` builds the protocol from the
    validated values when a command serves several classes. ``role_defaults`` are generation settings the paper
    fixes, used for every model role where the user set none; ``forward_seed=False`` keeps ``--seed`` for the
    protocol. ``summarize`` returns the JSON fields and the text printed after a run.
    """

    command: str | None = None
    help: str = ""
    description: str = ""
    params: ParamsCLI = field(default_factory=ParamsCLI)
    add_arguments: Callable[[argparse.ArgumentParser], None] | None = None
    load_inputs: Callable[[argparse.Namespace, Protocol[Any, Any]], Inputs] | None = None
    values: Callable[[argparse.Namespace], Mapping[str, Any]] | None = None
    make_protocol: Callable[[argparse.Namespace, Mapping[str, Any]], Protocol[Any, Any]] | None = None
    role_defaults: Mapping[str, Any] = field(default_factory=dict)
    forward_seed: bool = True
    summarize: Callable[[Any], tuple[dict[str, Any], str]] | None = None


@dataclass(frozen=True)
class Registration:
    """One protocol as the core sees it."""

    protocol: type[Protocol[Any, Any]]
    report: Callable[[Transcript], Report]
    """``report(transcript)``: a ``voirdire.report.ReportFold`` (the built-in protocols'), which commands stream a
    transcript through, or a plain function of a loaded transcript."""
    cli: CommandSpec = field(default_factory=CommandSpec)

    @property
    def name(self) -> str:
        return self.protocol.name

    @property
    def fold(self) -> ReportFold[Any, Any]:
        """The report as a fold over sessions (a plain function is wrapped: it still sees the whole transcript)."""
        return as_fold(self.report)


@cache
def registrations() -> dict[str, Registration]:
    """Every registered protocol by name (entry points are loaded once per process)."""
    found: dict[str, Registration] = {}
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            reg = ep.load()
        except Exception as exc:  # a broken plugin names itself instead of breaking every command
            raise RegistryError(f"protocol plugin {ep.name!r} ({ep.value}) cannot be loaded: {exc}") from exc
        if not isinstance(reg, Registration):
            raise RegistryError(f"protocol plugin {ep.name!r} ({ep.value}) is not a voirdire Registration")
        if ep.name != reg.name:
            raise RegistryError(f"protocol plugin {ep.name!r} registers a protocol named {reg.name!r}")
        if reg.name in found:
            continue  # the same distribution seen twice on sys.path
        found[reg.name] = reg
    return dict(sorted(found.items()))


@cache
def command_plugins() -> tuple[Callable[[Any], None], ...]:
    """The ``add_command(subparsers)`` functions of the ``voirdire.commands`` group."""
    found = []
    for ep in importlib.metadata.entry_points(group=COMMANDS_GROUP):
        try:
            found.append(ep.load())
        except Exception as exc:
            raise RegistryError(f"command plugin {ep.name!r} ({ep.value}) cannot be loaded: {exc}") from exc
    return tuple(found)


def get(name: str) -> Registration:
    regs = registrations()
    if name not in regs:
        raise RegistryError(f"unknown protocol {name!r}; registered: {', '.join(regs) or 'none'}")
    return regs[name]


def known_roles() -> frozenset[str]:
    """Every role some registered protocol names (a config may bind roles of several protocols)."""
    return frozenset(role for reg in registrations().values() for role in reg.protocol.roles)
