"""The ``voirdire`` command, generated from the protocol registry.

``voirdire run NAME`` exists for every registered protocol, with options generated from its ``Params``
(``voirdire.options``) beside the shared model and run options; a protocol that names a friendly command
(``examine``, ``nodata``, ``qa-eval``) gets it too, with the same options. ``list``, ``show`` and ``report`` work on
any protocol's transcripts through the registry and the self-describing run header.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import traceback
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from pydantic import BaseModel, ValidationError

from voirdire import __version__
from voirdire.datasets import describe, load_items
from voirdire.errors import VoirdireError
from voirdire.machine import StateMachine
from voirdire.models import RoleSettings, load_role_config, parse_spec
from voirdire.options import add_params_options, build_params, given_params
from voirdire.prices import ENV as PRICES_ENV
from voirdire.prices import Prices, load_prices
from voirdire.protocol import Protocol
from voirdire.registry import CommandSpec, Inputs, Registration, command_plugins, get, registrations
from voirdire.report import Report, ReportFold, generic_report, report_file
from voirdire.runner import ErrorBudget, RunResult, check_writable, default_out, model_roles, role_problem, run_protocol
from voirdire.secrets import mask_secrets, mask_tree
from voirdire.transcript import RunHeader, SessionRecord, Transcript, load, load_session
from voirdire.view import render, summary_line


class CLIError(VoirdireError):
    """A command line that cannot run; the message names the option."""


class Parser(argparse.ArgumentParser):
    """argparse with voirdire's error style: ``--option: message`` (not ``argument --option: message``)."""

    def error(self, message: str) -> NoReturn:
        message = re.sub(r"^argument ([^:]+): ", lambda m: f"{m.group(1).split('/')[-1]}: ", message)
        self.exit(2, f"{self.prog}: error: {message}\n(`{self.prog} --help` lists the options)\n")


def _at_least(low: int) -> Callable[[str], int]:
    """An option's int parser that refuses values below ``low``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        return value

    return parse


# ----------------------------------------------------------------------------------------- shared options

SHARED_HELP = {
    "max_tokens": "bound every reply (default 256)",
    "temperature": "sampling temperature for every role (default 0: greedy)",
    "seed": "sampling seed for every role",
}


def add_model_options(p: argparse.ArgumentParser, help: Mapping[str, str] | None = None) -> None:
    texts = {**SHARED_HELP, **(help or {})}
    g = p.add_argument_group("models (any role can be any model)")
    g.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="ROLE=SPEC",
        help="bind a role to a model spec: local | local:FILE.gguf | openai:MODEL | "
        "openai-compatible:MODEL@URL | scripted:FILE | human; a bare SPEC binds every role (repeatable)",
    )
    g.add_argument(
        "--config",
        type=Path,
        help="TOML run config with [roles.NAME] tables: model, temperature, max_tokens, seed, structured, timeout, "
        "max_retries, api_key_env",
    )
    g.add_argument("--max-tokens", type=int, metavar="N", help=texts["max_tokens"])
    g.add_argument("--temperature", type=float, help=texts["temperature"])
    g.add_argument("--seed", type=int, help=texts["seed"])
    g.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help="seconds one model request of every role may take, connecting included (default 30 for openai and "
        "openai-compatible specs, 600 for local models; a person typing has none); a request past it is retried "
        "like a dropped connection",
    )
    g.add_argument(
        "--max-retries",
        type=int,
        metavar="N",
        help="retries of a failed request of every role: timeouts, dropped connections, cut-off replies, 429 and "
        "5xx (default 3 for openai and openai-compatible specs, 0 for local models)",
    )
    g.add_argument(
        "--api-key-env",
        action="append",
        default=[],
        metavar="[ROLE=]VAR",
        help="the environment variable holding a role's API key (a bare VAR: every role); without it openai: specs "
        "read OPENAI_API_KEY and openai-compatible: specs send no key (repeatable)",
    )
    g.add_argument(
        "--structured",
        action="store_true",
        help="ask every role for its closed answers through a reply schema the backend enforces (a grammar for "
        "llama.cpp, response_format for OpenAI-compatible endpoints) instead of reading the paper's free text; "
        "per role: structured = true in the --config table",
    )


def add_run_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("run")
    g.add_argument("--out", type=Path, help="transcript file (JSONL); a batch resumes it if it exists")
    g.add_argument("--fresh", action="store_true", help="overwrite --out instead of resuming it")
    g.add_argument(
        "--concurrency", type=_at_least(1), default=1, metavar="N",
        help="sessions at a time (default 1)",
    )  # fmt: skip
    g.add_argument("--limit", type=_at_least(1), metavar="N", help="first N items of the dataset")
    g.add_argument(
        "--offset", type=_at_least(0), default=0, metavar="N", help="skip the first N items (counted from the start)"
    )
    g.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    g.add_argument("--report", type=Path, help="also write the metrics report as JSON here")
    g.add_argument("--no-progress", action="store_true", help="no progress bar")
    g.add_argument("--cache", type=Path, help="JSONL cache of model replies: identical deterministic calls are reused")
    g.add_argument(
        "--no-coalesce",
        action="store_true",
        help="send every request, even one identical to an earlier greedy (or seeded) request of the same session; "
        "by default such a request is answered by the first one and marked coalesced in the transcript",
    )
    g.add_argument(
        "--max-errors",
        type=_error_budget,
        metavar="N|P%",
        help="stop the run once more than N sessions (or P%% of the sessions to run) have failed; the sessions not "
        "started are left for a re-run to resume (exit status 4)",
    )
    g.add_argument(
        "--allow-errors",
        action="store_true",
        help="exit 0 even when sessions failed (otherwise exit status 3; failed sessions are in the transcript)",
    )
    g.add_argument(
        "--workers", type=_at_least(1), default=1, metavar="N",
        help="run the sessions in N processes (--concurrency sessions at a time in each), all writing the one "
        "transcript; with --executor ray, N Ray actors (default 1: this process alone)",
    )  # fmt: skip
    g.add_argument(
        "--executor", choices=("local", "ray"), default="local",
        help="where the sessions run: local (this machine, --workers processes) or ray (a Ray cluster, --workers "
        "actors; needs voirdire[ray]); the transcript is the same (default local)",
    )  # fmt: skip
    g.add_argument(
        "--ray-address", metavar="ADDRESS",
        help="with --executor ray: the cluster to join (auto: the one this machine belongs to; default: start a "
        "local Ray instance for this run)",
    )  # fmt: skip


def _error_budget(text: str) -> ErrorBudget:
    try:
        return ErrorBudget.parse(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected N or P%, e.g. 5 or 10%, not {text!r}") from None


# The flag that sets each role setting, named by an error in its value.
SETTING_FLAGS = {
    "model": "--model",
    "max_tokens": "--max-tokens",
    "temperature": "--temperature",
    "seed": "--seed",
    "structured": "--structured",
    "timeout": "--timeout",
    "max_retries": "--max-retries",
    "api_key_env": "--api-key-env",
}


def _role_of(entry: str) -> tuple[str, str]:
    """``ROLE=VALUE`` when ROLE is a role name, else ``("*", entry)``: a spec whose URL holds ``=`` is bare."""
    role, sep, value = entry.partition("=")
    return (role, value) if sep and re.fullmatch(r"\*|[A-Za-z_][\w-]*", role) else ("*", entry)


def check_role_options(protocol: Protocol[Any, Any], args: argparse.Namespace) -> None:
    """Every role a ``--model`` or ``--api-key-env`` names is one this protocol plays with a model in this
    configuration; a bare one needs at least one such role. A role of another protocol or a rule-played role is
    an error; a role of this protocol that this configuration leaves out is a warning; none is silently ignored."""
    for flag, entries in (("--model", args.model), ("--api-key-env", getattr(args, "api_key_env", []))):
        for entry in entries:
            role, _ = _role_of(entry)
            if role == "*":
                if not model_roles(protocol):
                    raise CLIError(
                        f"{flag}: {protocol.name} plays no role with a model here, so the spec would not be used"
                    )
                continue
            problem = role_problem(protocol, role)
            if problem and problem[1]:
                raise CLIError(f"{flag} {role}=...: {problem[0]}")
            if problem:
                print(f"warning: {flag} {role}=...: {problem[0]}", file=sys.stderr)


def warn_unused_config_roles(protocol: Protocol[Any, Any], args: argparse.Namespace) -> None:
    """A ``--config`` table of a role this run does not use (one config may serve several protocols) is said."""
    if not args.config:
        return
    for role in load_role_config(args.config):
        problem = role_problem(protocol, role) if role != "*" else None
        if problem:
            print(f"warning: {args.config}: [roles.{role}] is not used by this run: {problem[0]}", file=sys.stderr)


def roles_from_args(args: argparse.Namespace, *, forward_seed: bool = True) -> dict[str, RoleSettings]:
    """Role bindings from ``--config``, then ``--model`` (a bare SPEC rebinds every role) and ``--api-key-env``,
    then the global ``--max-tokens``/``--temperature``/``--seed``/``--timeout``/``--max-retries``, each validated
    like the config file. ``ROLE=`` is read only when ROLE is a role name, so a spec whose URL holds ``=`` is a
    bare spec."""
    roles: dict[str, RoleSettings] = load_role_config(args.config) if args.config else {}

    def updated(settings: RoleSettings, **changes: object) -> RoleSettings:
        try:
            return RoleSettings.model_validate({**settings.model_dump(), **changes})
        except ValidationError as exc:
            problem = "; ".join(
                f"{SETTING_FLAGS.get(str(e['loc'][0]), e['loc'][0])}: {str(e['msg']).removeprefix('Value error, ')}"
                for e in exc.errors(include_url=False)
            )
            raise CLIError(problem) from None

    def bind(role: str, **changes: object) -> None:
        nonlocal roles
        if role == "*":
            roles = {r: updated(s, **changes) for r, s in roles.items()}
        roles[role] = updated(roles.get(role) or roles.get("*") or RoleSettings(), **changes)

    for entry in args.model:
        role, spec = _role_of(entry)
        parse_spec(spec)
        bind(role, model=spec)
    for entry in getattr(args, "api_key_env", []):
        role, var = _role_of(entry)
        bind(role, api_key_env=var)
    overrides = {
        k: v
        for k, v in (
            ("max_tokens", args.max_tokens),
            ("temperature", args.temperature),
            ("seed", args.seed if forward_seed else None),
            ("structured", True if getattr(args, "structured", False) else None),
            ("timeout", getattr(args, "timeout", None)),
            ("max_retries", getattr(args, "max_retries", None)),
        )
        if v is not None
    }
    if overrides:
        roles.setdefault("*", RoleSettings())
        roles = {r: updated(s, **overrides) for r, s in roles.items()}
    return roles


def with_role_defaults(
    protocol: Protocol[Any, Any], args: argparse.Namespace, roles: dict[str, RoleSettings], defaults: Mapping[str, Any]
) -> dict[str, RoleSettings]:
    """Give every model role the generation settings a paper fixes (``defaults``) wherever the user set none, by
    flag (every role) or in the ``--config`` table that binds the role. ``RoleSettings.max_tokens`` always has a
    value, so "not set" is read from the flags and the config, never from the value."""
    if not defaults:
        return roles
    config = load_role_config(args.config) if args.config else {}
    flagged = {key for key in defaults if getattr(args, key, None) is not None}
    rule_roles = set(protocol.rule_roles())
    for role in protocol.required_roles():
        if role in rule_roles:
            continue
        settings = roles.get(role) or roles.get("*") or RoleSettings()
        table = config.get(role) or config.get("*")
        given = flagged | (table.model_fields_set & set(defaults) if table is not None else set())
        missing = {k: v for k, v in defaults.items() if k not in given}
        if missing:
            roles[role] = settings.model_copy(update=missing)
    return roles


# ----------------------------------------------------------------------------------------- running a protocol


@dataclass
class Outcome:
    """What a run command has at its end; a protocol's ``CommandSpec.summarize`` turns it into output.

    The transcript is not held (a run may be long): ``report`` was folded from it record by record, and
    ``session``, ``transcript_of`` and ``report_of`` read it again for one session, or for some sessions."""

    args: argparse.Namespace
    protocol: Protocol[Any, Any]
    inputs: Inputs
    result: RunResult
    out: Path
    report: Report
    fold: ReportFold[Any, Any]
    session_ids: list[str]  # the transcript's sessions, in order of first appearance
    prices: Prices
    _shown: dict[str, Transcript] = field(default_factory=dict)

    def transcript_of(self, session_id: str) -> Transcript:
        """The transcript with this one session (``load``'s attempt of it), read once."""
        if session_id not in self._shown:
            self._shown[session_id] = load_session(self.out, session_id)
        return self._shown[session_id]

    def session(self, session_id: str) -> SessionRecord | None:
        return self.transcript_of(session_id).sessions.get(session_id)

    def report_of(self, session_ids: Sequence[str]) -> Report:
        """The report of these sessions, in this order (a command's own items, in a transcript that may hold more);
        ids the transcript lacks are left out. The run's ``report`` when they are the transcript's sessions."""
        if list(session_ids) == self.session_ids:
            return self.report
        return report_file(self.out, self.fold, prices=self.prices, only=session_ids)[0]


def generic_inputs(args: argparse.Namespace, protocol: Protocol[Any, Any]) -> Inputs:
    """``--data FILE`` (JSONL, CSV or a JSON list) or ``--item JSON`` (repeatable), read by the protocol's
    ``item_from_record``."""
    if args.data and args.item:
        raise CLIError("--item: give either --data FILE or --item JSON, not both")
    if args.data:
        items = load_items(args.data, protocol.item_from_record, limit=args.limit, offset=args.offset)
        return Inputs(items=items, dataset=str(args.data))
    if not args.item:
        raise CLIError(f"{protocol.name}: give --data FILE or --item JSON")
    items = []
    for n, text in enumerate(args.item, 1):
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CLIError(f"--item {n}: not JSON ({exc.msg})") from None
        try:
            items.append(protocol.item_from_record(record))
        except (ValueError, TypeError) as exc:
            raise CLIError(f"--item {n}: {describe(exc)}") from None
    return Inputs(items=items, single=len(items) == 1)


def add_generic_inputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", type=Path, help="items to run on: JSONL, CSV or a JSON list")
    p.add_argument("--item", action="append", default=[], metavar="JSON", help="one item as JSON (repeatable)")


def default_summary(o: Outcome) -> tuple[dict[str, Any], str]:
    """Verdicts and the protocol's report; the chat itself when one item was given inline."""
    payload = {
        "verdicts": {
            k: v.model_dump(mode="json", include={"decision", "accepted", "evidence", "statistics"})
            for k, v in o.result.verdicts.items()
        },
        "report": o.report.model_dump(mode="json", exclude={"rows"}),
    }
    if o.inputs.single:
        sid = o.result.session_ids[0]
        return payload, render(o.transcript_of(sid), session=sid)
    return payload, o.report.text()


def run(
    protocol: Protocol[Any, Any],
    items: Sequence[BaseModel],
    args: argparse.Namespace,
    out: Path,
    dataset: str | None,
    roles: dict[str, RoleSettings],
) -> RunResult:
    """Run ``protocol`` with the shared run options. A warning is printed (masked) when it first occurs, and never
    again in the run."""
    seen: dict[str, None] = {}

    def show(message: Warning | str, *rest: object, **kw: object) -> None:
        text = mask_secrets(str(message))
        if text not in seen:
            seen[text] = None
            from tqdm import tqdm

            tqdm.write(f"warning: {text}", file=sys.stderr)  # above a progress bar, not through it

    executor = getattr(args, "executor", "local")
    if getattr(args, "ray_address", None) is not None and executor != "ray":
        raise CLIError("--ray-address: only with --executor ray")
    with warnings.catch_warnings():
        warnings.simplefilter("always", UserWarning)
        warnings.showwarning = show  # type: ignore[assignment]
        result = asyncio.run(
            run_protocol(
                protocol,
                items,
                out=out,
                roles=roles,
                concurrency=args.concurrency,
                resume=not args.fresh,
                progress=not (args.no_progress or args.json),
                dataset=dataset,
                command=[mask_secrets(a) for a in getattr(args, "argv", sys.argv)],
                seed=args.seed,
                cache=args.cache,
                max_errors=getattr(args, "max_errors", None),
                workers=getattr(args, "workers", 1),
                executor=executor,
                ray_address=getattr(args, "ray_address", None),
                coalesce=not getattr(args, "no_coalesce", False),
                # the verdicts are printed only with --json or --report; otherwise memory stays flat in the run size
                keep_verdicts=bool(args.json or getattr(args, "report", None)),
            )
        )
    result.warnings = list(seen)
    return result


def cmd_run(reg: Registration, args: argparse.Namespace) -> int:
    spec = reg.cli
    values = {**given_params(args), **(spec.values(args) if spec.values else {})}
    if spec.make_protocol is not None:
        protocol = spec.make_protocol(args, values)
    else:
        protocol = reg.protocol(build_params(reg.protocol.Params, spec.params, values))
    check_role_options(protocol, args)
    prices = prices_of(args)  # a bad price file is found before the run pays for its model calls
    roles = roles_from_args(args, forward_seed=spec.forward_seed)
    inputs = (spec.load_inputs or generic_inputs)(args, protocol)
    if not inputs.items:
        raise CLIError(f"{inputs.dataset or protocol.name}: no items to run (after --offset / --limit)")
    out = args.out or inputs.out or default_out(protocol.name, inputs.dataset)
    # Every output path before the run starts: a run must not pay for its model calls and then fail to write.
    check_writable(out, "--out" if args.out else "transcript")
    for flag in ("report", "cache"):
        if getattr(args, flag, None) is not None:
            check_writable(getattr(args, flag), f"--{flag}")
    warn_unused_config_roles(protocol, args)
    roles = with_role_defaults(protocol, args, roles, spec.role_defaults)
    result = run(protocol, inputs.items, args, out, inputs.dataset, roles)
    report, folded = report_file(out, reg.fold, prices=prices)  # streamed: flat memory whatever the run's length
    outcome = Outcome(args, protocol, inputs, result, out, report, reg.fold, folded.session_ids(), prices)
    fields, text = (spec.summarize or default_summary)(outcome)
    payload = {**run_summary(result, out), **fields}
    return finish(args, result, payload, text, timing=not inputs.single)


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
    """The shared end of a run command: ``--report`` file, ``--json`` or the text, run time, session errors, all
    masked (``voirdire.secrets``).

    Exit status: 0 when every session has a verdict; 3 when a session failed (``--allow-errors``: 0); 4 when
    ``--max-errors`` stopped the run. Failed and unstarted sessions are resumed by running the command again.
    """
    payload = mask_tree(
        {**payload, "retries": result.retries, "stopped": result.stopped, "not_started": result.not_started}
    )
    if args.report:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text(json.dumps(payload, indent=2, ensure_ascii=False))
    if args.json:
        print(json.dumps(payload, indent=2, ensure_ascii=False))
    else:
        print(mask_secrets(text))
        if timing:
            ran = len(result.session_ids) - result.skipped - result.not_started
            retried = f", {result.retries} model calls retried" if result.retries else ""
            print(
                f"time: {result.elapsed_s:.1f}s for {ran} sessions ({result.skipped} resumed from the "
                f"transcript{retried})"
            )
        print(f"{'' if timing else chr(10)}transcript: {result.out}")
    for sid, err in result.errors.items():
        print(f"error in {sid}: {mask_secrets(err)}", file=sys.stderr)
    if result.stopped:
        print(
            f"voirdire: run stopped: {mask_secrets(result.stopped)}; {result.not_started} sessions not started. "
            "The transcript holds every finished session: run the same command again to resume.",
            file=sys.stderr,
        )
        return 4
    if result.errors and not getattr(args, "allow_errors", False):
        print(
            f"voirdire: {len(result.errors)} of {len(result.session_ids) - result.skipped} sessions failed "
            "(exit status 3; --allow-errors exits 0); run the same command again to retry them",
            file=sys.stderr,
        )
        return 3
    return 0


# ----------------------------------------------------------------------------------------- list / show / report


def cmd_list(args: argparse.Namespace) -> int:
    regs = registrations()
    if args.protocol:
        regs = {name: get(name) for name in args.protocol}
    if args.graph:
        print("\n\n".join(r.protocol.machine.mermaid(title=r.name) for r in regs.values()))
        return 0
    if args.json:
        rows = [
            {
                "name": r.name,
                "command": r.cli.command,
                "roles": list(r.protocol.roles),
                "states": list(r.protocol.machine.states),
                "paper": r.protocol.paper,
            }
            for r in regs.values()
        ]
        print(json.dumps(rows, indent=2))
        return 0
    for r in regs.values():
        friendly = f"  (voirdire {r.cli.command})" if r.cli.command else ""
        print(f"{r.name}{friendly}\n    roles: {', '.join(r.protocol.roles) or 'none (model-free)'}")
        if r.protocol.paper:
            print(f"    paper: {r.protocol.paper}")
    return 0


def load_records(path: Path) -> Transcript:
    """A transcript to read back; a file with no record in it (an empty file, or not a transcript at all) is an
    error rather than empty output."""
    t = load(path)
    if t.header is None and not t.sessions:
        raise CLIError(f"{path}: not a transcript (no run header and no session events in it)")
    return t


def cmd_show(args: argparse.Namespace) -> int:
    t = load_records(args.transcript)
    if args.graph:
        if t.header is None or not t.header.transitions:
            raise CLIError(f"{t.path}: the run header records no state machine (written before schema 2)")
        print(StateMachine.from_record(t.header.transitions).mermaid(title=t.header.protocol))
        return 0
    if args.list:
        for s in t.sessions.values():
            print(summary_line(s))
        return 0
    if args.json:
        if args.session and args.session not in t.sessions:
            raise CLIError(f"{t.path}: no session {args.session!r}")
        chosen = [t.sessions[args.session]] if args.session else list(t.sessions.values())
        print(json.dumps([s.model_dump(mode="json") for s in chosen], indent=2))
        return 0
    print(render(t, session=args.session, prompts=args.prompts))
    return 0


def get_report(reg: Registration | None, t: Transcript) -> Report:
    return reg.report(t) if reg is not None else generic_report(t)


def add_prices_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--prices", type=Path, metavar="FILE",
        help="a TOML price table ([models] NAME = { input = USD, output = USD } per million tokens) over the "
        f"packaged one and ${PRICES_ENV}'s, for the report's cost lines",
    )  # fmt: skip


def prices_of(args: argparse.Namespace) -> Prices:
    """The price table: packaged, then the file $VOIRDIRE_PRICES names, then ``--prices FILE``."""
    return load_prices(getattr(args, "prices", None))


def cmd_report(args: argparse.Namespace) -> int:
    prices = prices_of(args)
    regs = registrations()
    folds: dict[str, ReportFold[Any, Any]] = {}

    def fold_for(header: RunHeader | None) -> ReportFold[Any, Any]:
        """The header's protocol's report (the last header rules; a protocol not installed: the counts)."""
        name = header.protocol if header else ""
        if name not in folds:
            folds[name] = regs[name].fold if name in regs else generic_report
        return folds[name]

    path = args.transcript
    report, folded = report_file(path, fold_for, prices=prices)  # streamed: flat memory whatever its length
    if not folded.headers and not folded.session_ids():
        raise CLIError(f"{path}: not a transcript (no run header and no session events in it)")
    if not folded.headers:
        raise CLIError(f"{path}: no run header, so no protocol to report on")
    if folded.headers[-1].protocol not in regs:
        print(f"warning: protocol {folded.headers[-1].protocol!r} is not installed; counts only", file=sys.stderr)
    # Masked like a run's output: model labels (endpoints) now appear in the usage lines and JSON.
    print(mask_secrets(report.model_dump_json(indent=2) if args.json else report.text()))
    return 0


# ----------------------------------------------------------------------------------------- view / export-html


def parse_price(text: str) -> tuple[str, tuple[float, float]]:
    """``MODEL=IN,OUT`` (USD per million prompt and completion tokens)."""
    model, sep, rest = text.rpartition("=")
    try:
        prompt, completion = (float(x) for x in rest.split(","))
    except ValueError:
        prompt = completion = -1.0
    if not sep or not model or prompt < 0 or completion < 0:
        raise CLIError(f"--price {text!r}: expected MODEL=IN,OUT in USD per million tokens, e.g. openai:gpt-4o=2.5,10")
    return model, (prompt, completion)


def cmd_view(args: argparse.Namespace) -> int:
    from contextlib import suppress

    from voirdire.web.server import Viewer

    viewer = Viewer(args.sources or ["transcripts"], port=args.port, prices=dict(map(parse_price, args.price)))
    print(f"voirdire view: {viewer.url}  (Ctrl-C stops it)", flush=True)
    with suppress(KeyboardInterrupt):  # Ctrl-C is how the viewer is meant to stop
        viewer.serve()
    return 0


def cmd_export_html(args: argparse.Namespace) -> int:
    from voirdire.web.export import export_file

    print(export_file(args.transcript, args.out, session=args.session))
    return 0


# ----------------------------------------------------------------------------------------- parser


def add_protocol_command(sub: Any, name: str, reg: Registration, *, help: str | None = None) -> None:
    spec: CommandSpec = reg.cli
    p = sub.add_parser(name, help=help or spec.help or reg.protocol.__doc__, description=spec.description or None)
    (spec.add_arguments or add_generic_inputs)(p)
    add_params_options(p, reg.protocol.Params, spec.params)
    add_model_options(p, spec_shared_help(spec))
    add_run_options(p)
    add_prices_option(p)
    p.set_defaults(func=lambda args, r=reg: cmd_run(r, args))


def spec_shared_help(spec: CommandSpec) -> dict[str, str]:
    help = dict(SHARED_HELP)
    for key, value in spec.role_defaults.items():
        help[key] = f"{SHARED_HELP[key].split(' (')[0]} (this protocol's default: {value}, the paper's setting)"
    if not spec.forward_seed:
        help["seed"] = "the protocol's own seed (default 0); not forwarded to model roles"
    return help


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
    regs = registrations()

    rn = sub.add_parser("run", help="run any registered protocol (see `voirdire list`)")
    run_sub = rn.add_subparsers(dest="protocol", required=True, metavar="PROTOCOL")
    for name, reg in regs.items():
        add_protocol_command(run_sub, name, reg)
    for reg in regs.values():
        if reg.cli.command:
            add_protocol_command(sub, reg.cli.command, reg)

    ls = sub.add_parser("list", help="the registered protocols, their roles and papers")
    ls.add_argument("protocol", nargs="*", help="only these protocols")
    ls.add_argument("--json", action="store_true")
    ls.add_argument("--graph", action="store_true", help="each protocol's state diagram (Mermaid)")
    ls.set_defaults(func=cmd_list)

    sh = sub.add_parser("show", help="render a transcript as a chat")
    sh.add_argument("transcript", type=Path)
    sh.add_argument("--session", help="only this session id")
    sh.add_argument("--prompts", action="store_true", help="also show the prompts the moderator sent")
    sh.add_argument("--list", action="store_true", help="one line per session")
    sh.add_argument("--json", action="store_true", help="sessions as JSON")
    sh.add_argument("--graph", action="store_true", help="the protocol's state diagram (Mermaid), from the header")
    sh.set_defaults(func=cmd_show)

    rp = sub.add_parser("report", help="the protocol's report of any transcript")
    rp.add_argument("transcript", type=Path)
    rp.add_argument("--json", action="store_true")
    add_prices_option(rp)
    rp.set_defaults(func=cmd_report)

    vw = sub.add_parser("view", help="browse transcripts as chats in a local web app on 127.0.0.1")
    vw.add_argument("sources", nargs="*", metavar="DIR|TRANSCRIPT", help="folders, transcripts (default transcripts/)")
    vw.add_argument("--port", type=int, default=7788, help="port on 127.0.0.1 (default 7788; 0 picks a free one)")
    vw.add_argument(
        "--price", action="append", default=[], metavar="MODEL=IN,OUT",
        help="USD per million prompt,completion tokens of a model as transcripts name it, for run costs (repeatable)",
    )  # fmt: skip
    vw.set_defaults(func=cmd_view)

    ex = sub.add_parser("export-html", help="a transcript (or one session) as one self-contained HTML page")
    ex.add_argument("transcript", type=Path)
    ex.add_argument("--session", help="only this session id")
    ex.add_argument("-o", "--out", type=Path, required=True, metavar="FILE.html", help="the page to write")
    ex.set_defaults(func=cmd_export_html)

    for add_command in command_plugins():  # commands protocol packages add beside their protocols' own
        add_command(sub)
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
        return _error(str(exc), debug)
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
        print(mask_secrets(traceback.format_exc()).rstrip(), file=sys.stderr)
    print(f"voirdire: error: {mask_secrets(message)}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
