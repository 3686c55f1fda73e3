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
from typing import TYPE_CHECKING, Any, Protocol as Structural

from voirdire.base import VoirdireError
from voirdire.registry.flags import ParamsCLI
from voirdire.reports import DEFAULT_DECIDED_AT

if TYPE_CHECKING:  # types only: a run's and a report's modules are imported where they are used, not by --help
    from pydantic import BaseModel

    from voirdire.reports import ChartFold, Prices, Report, ReportFold, Reproduction
    from voirdire.session import CallBudget, Protocol
    from voirdire.transcript import RunHeader, SessionRecord, Transcript, Verdict

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
    seed: int | None = None  # the run's seed for the header, when the protocol owns --seed and defaults it


class RunFacts(Structural):
    """What a summary reads of a finished run (``voirdire.runner.RunResult`` is one)."""

    @property
    def session_ids(self) -> list[str]: ...

    @property
    def verdicts(self) -> dict[str, Verdict]: ...


@dataclass
class RunOutcome:
    """What a run command has at its end; a protocol's ``CommandSpec.summarize`` turns it into output.

    The transcript is not held (a run may be long): ``report`` was folded from it record by record, and
    ``session``, ``transcript_of`` and ``report_of`` read it again for one session, or for some sessions.
    ``chat(session_id)`` is that session as ``voirdire show`` prints it."""

    protocol: Protocol[Any, Any]
    inputs: Inputs
    result: RunFacts
    out: Path
    report: Report
    fold: ReportFold[Any, Any]
    session_ids: Sequence[str]  # the transcript's sessions, in order of first appearance
    prices: Prices
    render: Callable[[Transcript, str], str]
    _shown: dict[str, Transcript] = field(default_factory=dict)
    ci: float = 0.95  # the level of the report's intervals (``--ci``); 0: none
    decided_at: float = DEFAULT_DECIDED_AT  # with repeats: the share of its repeats that decides an item

    def transcript_of(self, session_id: str) -> Transcript:
        """The transcript with this one session (``load``'s attempt of it), read once."""
        from voirdire.transcript import load_session

        if session_id not in self._shown:
            self._shown[session_id] = load_session(self.out, session_id)
        return self._shown[session_id]

    def session(self, session_id: str) -> SessionRecord | None:
        return self.transcript_of(session_id).sessions.get(session_id)

    def chat(self, session_id: str) -> str:
        return self.render(self.transcript_of(session_id), session_id)

    def report_of(self, session_ids: Sequence[str]) -> Report:
        """The report of these sessions, in this order (a command's own items, in a transcript that may hold more);
        ids the transcript lacks are left out. The run's ``report`` when they are the transcript's sessions, in
        whatever order: several processes' sessions (``--workers``, Ray) are in the transcript in the order they
        ended, and their command reports them as ``voirdire report`` does rather than reading the file again."""
        from voirdire.reports import report_file

        # A run's ids and its report's are kept compactly (``IdList``s): compared as they are before any is copied
        if session_ids == self.session_ids or (
            len(session_ids) == len(self.session_ids) and set(session_ids) == set(self.session_ids)
        ):
            return self.report
        return report_file(
            self.out, self.fold, prices=self.prices, only=session_ids, ci=self.ci, decided_at=self.decided_at
        )[0]


def default_summary(o: RunOutcome) -> tuple[dict[str, Any], str]:
    """Verdicts and the protocol's report; the chat itself when one item was given inline."""
    payload = {
        "verdicts": {
            k: v.model_dump(mode="json", include={"decision", "accepted", "evidence", "statistics", "guarantee"})
            for k, v in o.result.verdicts.items()
        },
        "report": o.report.model_dump(mode="json", exclude={"rows"}),
    }
    if o.inputs.single:
        return payload, o.chat(o.result.session_ids[0])
    return payload, o.report.text()


# A role's prompt whose replies were mostly unreadable: the verdicts built on it rest on the protocol's fallback
# outcome (an inconclusive verdict, App. D.2's random label, an unscored candidate), not on the model's answers.
MOSTLY = 0.5


def reliability(report: Report) -> tuple[dict[str, Any], list[str]]:
    """What every run's summary says of the replies behind its numbers, as fields and lines: the errors, the parse
    failures per role and prompt (as ``report`` prints them), and a warning for each role and prompt whose replies
    were mostly unreadable."""
    fields: dict[str, Any] = {"parse_failures": dict(report.parse_failures)}  # the errors are the run's own field
    lines = [f"errors: {report.errors} session{'s' if report.errors != 1 else ''}"] if report.errors else []
    if report.parse_failures:
        lines.append("parse failures: " + report.parse_failure_rates())
    # Most of a role's replies, over all its prompts: one unreadable reply of a prompt asked once (1 of 1) among a
    # role's five is one of five, not most.
    failed_by: dict[str, int] = {}
    replies_by: dict[str, int] = {}
    for key, failed in report.parse_failures.items():
        failed_by[_role(key)] = failed_by.get(_role(key), 0) + failed
    for key, n in report.replies.items():
        replies_by[_role(key)] = replies_by.get(_role(key), 0) + n
    most = {r for r, failed in failed_by.items() if replies_by.get(r) and failed / replies_by[r] > MOSTLY}
    mostly = {
        key: (failed, report.replies.get(key, 0))
        for key, failed in sorted(report.parse_failures.items())
        if _role(key) in most and report.replies.get(key, 0)
    }
    if mostly:
        said = ", ".join(f"{key} {failed} of {total}" for key, (failed, total) in mostly.items())
        warning = (
            f"warning: most replies were unreadable ({said}): the numbers above rest mostly on the protocol's "
            "fallback outcomes (each recorded with its parse failure), not on the model's answers"
        )
        lines.append(warning)
        fields["fallback_warning"] = warning
    return fields, lines


def _role(key: str) -> str:
    """The role of a ``role · prompt`` key."""
    return key.split(" · ", 1)[0]


def with_reliability(
    summarize: Callable[[RunOutcome], tuple[dict[str, Any], str]],
) -> Callable[[RunOutcome], tuple[dict[str, Any], str]]:
    """``summarize`` (a protocol's, or ``default_summary``) followed by ``reliability`` of this command's sessions:
    every run command prints its parse failures and errors the same way, right after its numbers."""

    def summary(o: RunOutcome) -> tuple[dict[str, Any], str]:
        fields, text = summarize(o)
        report = o.report_of(o.result.session_ids)
        extra, lines = reliability(report)
        shown = text.rstrip("\n").splitlines()
        lines = [line for line in lines if line not in shown]  # the report's own lines already say it
        usage = report.usage_lines()
        at = len(shown) - len(usage) if usage and shown[-len(usage) :] == usage else len(shown)
        text = "\n".join([*shown[:at], *lines, *shown[at:]])  # next to the numbers, before tokens and cost
        return {**extra, **fields}, text

    summary.reliability = True  # type: ignore[attr-defined]
    summary.__doc__ = summarize.__doc__
    return summary


@dataclass(frozen=True)
class CommandSpec:
    """How a protocol appears on the command line (``voirdire run NAME`` and its friendly ``command``).

    ``params`` maps the protocol's ``Params`` to options. ``add_arguments`` adds the options that are not
    parameters (what to run on); ``load_inputs`` reads them (default: ``--data FILE`` or ``--item JSON``).
    ``values`` adds parameter values derived from other options; ``make_protocol`` builds the protocol from the
    validated values when a command serves several classes. ``role_defaults`` are generation settings the protocol
    fixes, used for every model role where the user set none, and ``role_default_sources`` where each comes from
    (the paper's section, or voirdire's choice), as ``--help`` says it; ``forward_seed=False`` keeps ``--seed`` for the
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
    role_default_sources: Mapping[str, str] = field(default_factory=dict)  # where each default comes from, for --help
    forward_seed: bool = True
    summarize: Callable[[RunOutcome], tuple[dict[str, Any], str]] | None = None

    def __post_init__(self) -> None:
        # Every run command's summary ends the same way, whatever the protocol prints (``with_reliability``).
        summarize = self.summarize or default_summary
        if not getattr(summarize, "reliability", False):
            object.__setattr__(self, "summarize", with_reliability(summarize))


@dataclass(frozen=True)
class Registration:
    """One protocol as the core sees it."""

    protocol: type[Protocol[Any, Any]]
    report: Callable[[Transcript], Report] | None = None
    """``report(transcript)``: a ``voirdire.reports.fold.ReportFold`` (the built-in protocols'), which commands stream a
    transcript through, or a plain function of a loaded transcript; None: the counts every report starts with
    (``voirdire.reports.generic_report``)."""
    cli: CommandSpec = field(default_factory=CommandSpec)
    api: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    """Functions the protocol adds to the ``voirdire`` namespace (``voirdire.examine``), by name."""
    charts: ChartFold | None = None
    """The paper's charts its report offers (``voirdire report --plot``, the viewer); ``voirdire.reports.charts``."""
    reproductions: tuple[Reproduction, ...] = ()
    """The paper's tables and figures ``voirdire reproduce`` runs (one registration of a package lists them)."""
    budget: CallBudget | None = None
    """The model calls one item can take, declared beside the machine (``--estimate`` reads it); None: undeclared."""
    examples: Path | None = None
    """A folder of the paper's worked examples, one YAML file each (``voirdire.reports.PaperExample``), that
    ``voirdire reproduce paper-examples`` replays through the protocol; one registration of a package names it."""

    @property
    def name(self) -> str:
        return self.protocol.name

    @property
    def fold(self) -> ReportFold[Any, Any]:
        """The report as a fold over sessions (a plain function is wrapped: it still sees the whole transcript)."""
        from voirdire.reports import as_fold, generic_report

        return generic_report if self.report is None else as_fold(self.report)


@dataclass(frozen=True)
class Card:
    """A protocol as ``voirdire --help``, ``voirdire list`` and the run commands' table show it, declared as data: a
    protocol package's entry point may name a ``Card`` instead of its ``Registration``, and the registration
    (``target``, ``"module:attribute"``) is imported only when a command runs the protocol or reads more of it.
    Importing it checks that the card says what the registration says (``Card.of``)."""

    name: str
    target: str
    roles: tuple[str, ...]
    paper: str = ""
    command: str | None = None
    help: str | None = None
    """The run command's help line: the ``CommandSpec``'s ``help``, else the protocol's docstring."""
    loaded: Registration | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, reg: Registration, target: str = "") -> Card:
        """What ``reg`` shows before it is run (the card of an entry point that names a registration)."""
        return cls(
            name=reg.name,
            target=target,
            roles=tuple(reg.protocol.roles),
            paper=reg.protocol.paper,
            command=reg.cli.command,
            help=reg.cli.help or reg.protocol.__doc__,
            loaded=reg,
        )

    def load(self) -> Registration:
        """The registration this card stands for, imported once per process."""
        return self.loaded if self.loaded is not None else _load(self)


def _said(card: Card) -> tuple[Any, ...]:
    """What a card says, with help's whitespace as the command line shows it."""
    return card.name, card.roles, card.paper, card.command, " ".join((card.help or "").split())


@cache
def _load(card: Card) -> Registration:
    module, _, attribute = card.target.partition(":")
    try:
        reg = getattr(importlib.import_module(module), attribute)
    except Exception as exc:  # a broken plugin names itself instead of breaking every command
        raise RegistryError(f"protocol plugin {card.name!r} ({card.target}) cannot be loaded: {exc}") from exc
    if not isinstance(reg, Registration):
        raise RegistryError(f"protocol plugin {card.name!r} ({card.target}) is not a voirdire Registration")
    said = Card.of(reg)
    fields = ("name", "roles", "paper", "command", "help")
    differs = [f for f, a, b in zip(fields, _said(card), _said(said), strict=True) if a != b]
    if differs:
        raise RegistryError(
            f"protocol plugin {card.name!r}: its card and its registration ({card.target}) differ in "
            f"{', '.join(differs)}"
        )
    return reg


@cache
def _entry_points() -> importlib.metadata.EntryPoints:
    """Every installed entry point, read once: a scan reads each distribution's metadata whatever the group, so
    the protocols' and the commands' groups share one (about half the start-up's entry-point cost)."""
    return importlib.metadata.entry_points()


def cards() -> dict[str, Card]:
    """Every registered protocol's card by name, read from the entry points without importing a protocol that
    declares one (a plugin that names its ``Registration`` is imported, and its card made from it). A program that
    installs its own registry by replacing ``registrations`` (a test's or a benchmark's protocol) gets its cards."""
    if registrations is not _INSTALLED:
        return {name: Card.of(reg) for name, reg in registrations().items()}
    return _entry_point_cards()


@cache
def _entry_point_cards() -> dict[str, Card]:
    found: dict[str, Card] = {}
    for ep in _entry_points().select(group=ENTRY_POINT_GROUP):
        try:
            entry = ep.load()
        except Exception as exc:  # a broken plugin names itself instead of breaking every command
            raise RegistryError(f"protocol plugin {ep.name!r} ({ep.value}) cannot be loaded: {exc}") from exc
        if isinstance(entry, Registration):
            entry = Card.of(entry, ep.value)
        if not isinstance(entry, Card):
            raise RegistryError(f"protocol plugin {ep.name!r} ({ep.value}) is not a voirdire Registration")
        if ep.name != entry.name:
            raise RegistryError(f"protocol plugin {ep.name!r} registers a protocol named {entry.name!r}")
        if entry.name in found:
            continue  # the same distribution seen twice on sys.path
        found[entry.name] = entry
    return dict(sorted(found.items()))


@cache
def registrations() -> dict[str, Registration]:
    """Every registered protocol by name (entry points are loaded once per process)."""
    return {name: card.load() for name, card in _entry_point_cards().items()}


_INSTALLED = registrations


def report_folds() -> Callable[[RunHeader | None], ReportFold[Any, Any]]:
    """A run header's protocol's report fold (the last header rules; a protocol not installed: the counts alone),
    one object per protocol for the chooser's life: a plain report function's registration makes a new fold each
    time it is asked, and ``report_file`` reads a header naming another fold as another protocol's run (it would
    reread a resumed run's file whole)."""
    from voirdire.reports import generic_report

    regs = registrations()
    folds: dict[str, ReportFold[Any, Any]] = {}

    def fold_for(header: RunHeader | None) -> ReportFold[Any, Any]:
        name = header.protocol if header else ""
        if name not in folds:
            folds[name] = regs[name].fold if name in regs else generic_report
        return folds[name]

    return fold_for


class CommandTable(Structural):
    """What a ``voirdire.commands`` plugin is given: the ``voirdire`` parser's table of sub-commands, which also
    adds a registered protocol's run command (its options, inputs and output) under another name."""

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser: ...

    def add_protocol_command(
        self, sub: Any, name: str, reg: Registration | Card, *, help: str | None = None
    ) -> None:
        """``reg``'s run command as ``name`` in the sub-command table ``sub`` (this one, or one nested in it); given
        a ``Card``, the protocol is imported only when the command runs or shows its own help."""


@cache
def command_plugins() -> tuple[Callable[[CommandTable], None], ...]:
    """The ``add_command(commands)`` functions of the ``voirdire.commands`` group."""
    found = []
    for ep in _entry_points().select(group=COMMANDS_GROUP):
        try:
            found.append(ep.load())
        except Exception as exc:
            raise RegistryError(f"command plugin {ep.name!r} ({ep.value}) cannot be loaded: {exc}") from exc
    return tuple(found)


def get(name: str) -> Registration:
    """The registration of protocol ``name``, imported alone (not every registered protocol's)."""
    return card(name).load()


def card(name: str) -> Card:
    found = cards()
    if name not in found:
        raise RegistryError(f"unknown protocol {name!r}; registered: {', '.join(found) or 'none'}")
    return found[name]


def api_function(name: str) -> Callable[..., Any] | None:
    """The function a registered protocol adds to the ``voirdire`` namespace under ``name``, if one does."""
    return next((reg.api[name] for reg in registrations().values() if name in reg.api), None)


def api_names() -> list[str]:
    """Every name registered protocols add to the ``voirdire`` namespace (``examine``, ``check``, ...)."""
    return sorted({name for reg in registrations().values() for name in reg.api})


def known_roles() -> frozenset[str]:
    """Every role some registered protocol names (a config may bind roles of several protocols)."""
    return frozenset(role for card in cards().values() for role in card.roles)
