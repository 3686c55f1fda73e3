"""The run commands: ``voirdire run NAME`` for every registered protocol and its friendly command, each with the
protocol's own options (generated from its ``Params``) beside the shared ones (``voirdire.cli.options``)."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
import warnings
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from voirdire.base import IdList, mask_secrets, mask_tree, run_stopping, shown as safe, write_atomic
from voirdire.certificate import DEFAULT_LEVEL, estimate_run
from voirdire.cli.options import (
    REMOTE_CONCURRENCY,
    SHARED_HELP,
    CLIError,
    CommandOptions,
    add_model_options,
    add_prices_option,
    add_run_options,
)
from voirdire.cli.read import add_ci_option, add_decided_at_option
from voirdire.cli.refusal import refusal
from voirdire.cli.roles import check_role_options, roles_from_options, warn_unused_config_roles, with_role_defaults
from voirdire.models import RoleSettings
from voirdire.registry import (
    CommandSpec,
    Inputs,
    Registration,
    RunOutcome,
    add_field_option,
    add_params_options,
    build_params,
    default_summary,
    describe,
    given_params,
    parse_fields,
    source_name,
    stream_items,
)
from voirdire.reports import LiveReport, load_prices, report_file
from voirdire.runner import (
    ResumeError,
    RoleTable,
    RunResult,
    check_writable,
    default_out,
    model_roles,
    run_identity,
    run_protocol,
)
from voirdire.session import Protocol
from voirdire.transcript import Transcript, observing

if TYPE_CHECKING:
    from voirdire.chat import Mode


def add_protocol_options(p: argparse.ArgumentParser, reg: Registration) -> None:
    """``reg``'s run command's options and description in its parser ``p`` (``voirdire.cli.main`` made it from the
    protocol's card, with its name and help)."""
    spec: CommandSpec = reg.cli
    p.description = spec.description or None
    (spec.add_arguments or add_generic_inputs)(p)
    add_params_options(p, reg.protocol.Params, spec.params)
    add_model_options(p, spec_shared_help(spec))
    add_run_options(p)
    add_prices_option(p)
    add_ci_option(p)
    add_estimate_option(p)
    add_decided_at_option(p)
    p.set_defaults(func=lambda args, r=reg: cmd_run(r, args))


def add_estimate_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--estimate", action="store_true",
        help="print the bound on requests and cost from the protocol's declared call budget (an estimate, labelled so, "
        "where its parameters do not bound the calls) and an earlier run's figures, then exit without a model call",
    )  # fmt: skip


def spec_shared_help(spec: CommandSpec) -> dict[str, str]:
    help = dict(SHARED_HELP)
    for key, value in spec.role_defaults.items():
        source = spec.role_default_sources.get(key)  # never "the paper's" unless the protocol cites it
        help[key] = f"{SHARED_HELP[key].split(' (')[0]} (this protocol's default: {value}" + (
            f"; {source})" if source else ")"
        )
    if not spec.forward_seed:
        help["seed"] = "the protocol's own seed (default 0); not forwarded to model roles"
    return help


def add_generic_inputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", type=Path, help="items to run on: JSONL, CSV, a JSON list, Parquet, a datasets folder "
                   "(save_to_disk) or hf://owner/name")  # fmt: skip
    add_field_option(p)
    p.add_argument("--item", action="append", default=[], metavar="JSON", help="one item as JSON (repeatable)")


def generic_inputs(args: argparse.Namespace, protocol: Protocol[Any, Any]) -> Inputs:
    """``--data FILE`` (JSONL, CSV or a JSON list) or ``--item JSON`` (repeatable), read by the protocol's
    ``item_from_record``."""
    if args.data and args.item:
        raise CLIError("--item: give either --data FILE or --item JSON, not both")
    if args.data:
        fields = parse_fields(args.item__fields)
        items = stream_items(args.data, protocol.item_from_record, limit=args.limit, offset=args.offset, fields=fields)
        return Inputs(items=items, dataset=source_name(args.data))
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


def run(
    protocol: Protocol[Any, Any],
    items: Sequence[BaseModel],
    opts: CommandOptions,
    out: Path,
    dataset: str | None,
    roles: dict[str, RoleSettings],
    live: Mode | None = None,
) -> RunResult:
    """Run ``protocol`` with the shared run options. A warning is printed (masked) when it first occurs, and never
    again in the run. ``live``: print the sessions while they run (``voirdire.chat.live``)."""
    from voirdire.chat import LiveChat  # rich: imported by a run, not by `voirdire --help`

    seen: dict[str, None] = {}

    def show(message: Warning | str, *rest: object, **kw: object) -> None:
        text = mask_secrets(str(message))
        if text not in seen:
            seen[text] = None
            from tqdm import tqdm

            tqdm.write(f"warning: {text}", file=sys.stderr)  # above a progress bar, not through it

    with warnings.catch_warnings():
        warnings.simplefilter("always", UserWarning)
        warnings.showwarning = show  # type: ignore[assignment]
        with LiveChat(out, mode=live) if live else nullcontext():
            result = asyncio.run(run_protocol(protocol, items, out=out, roles=roles, dataset=dataset, options=opts.run))
    result.warnings = list(seen)
    return result


def cmd_run(reg: Registration, args: argparse.Namespace) -> int:
    spec = reg.cli
    opts = CommandOptions.from_args(args)
    values = {**given_params(args), **(spec.values(args) if spec.values else {})}
    if spec.make_protocol is not None:
        protocol = spec.make_protocol(args, values)
    else:
        protocol = reg.protocol(build_params(reg.protocol.Params, spec.params, values))
    check_role_options(protocol, opts.models)
    prices = load_prices(opts.prices)  # a bad price file is found before the run pays for its model calls
    roles = roles_from_options(opts.models, forward_seed=spec.forward_seed)
    inputs = (spec.load_inputs or generic_inputs)(args, protocol)
    if inputs.single and opts.run.repeats > 1:  # one item's repeats: their report (its stability), not one chat
        inputs = dataclasses.replace(inputs, single=False)
    if not inputs.items:
        raise CLIError(f"{inputs.dataset or protocol.name}: no items to run (after --offset / --limit)")
    if inputs.seed is not None:  # the protocol's own seed, defaulted by it: the header records that one
        opts = opts.model_copy(update={"run": opts.run.model_copy(update={"seed": inputs.seed})})
    warn_unused_config_roles(protocol, opts.models)
    roles = with_role_defaults(protocol, opts.models, roles, spec.role_defaults)
    if args.concurrency is None:
        concurrency = default_concurrency(protocol, roles)
        opts = opts.model_copy(update={"run": opts.run.model_copy(update={"concurrency": concurrency})})
    # A dataset's run gets a name that digests what makes it distinct (parameters, models), so two commands on the
    # same data never refuse each other's transcript, and the same command resumes its own.
    identity = run_identity(protocol, roles, repeats=opts.run.repeats)
    out = opts.out or (
        default_out(protocol.name, inputs.dataset, identity, base=inputs.out)
        if inputs.dataset is not None
        else inputs.out or default_out(protocol.name, None)
    )
    if args.estimate:  # before any file is opened for writing, and without a model call
        return print_estimate(reg, protocol, inputs.items, roles, prices, out, opts)
    # Every output path before the run starts: a run must not pay for its model calls and then fail to write.
    check_writable(out, "--out" if opts.out else "transcript")
    for flag, path in (("--report", opts.report), ("--cache", opts.run.cache)):
        if path is not None:
            check_writable(path, flag)
    if opts.run.max_cost is not None:  # what a session is expected to cost, before the run's first one ends
        opts = opts.model_copy(update={"run": opts.run.model_copy(update={"session_cost": _session_cost(
            reg, protocol, inputs.items, roles, prices, out, opts
        )})})  # fmt: skip
    from voirdire.chat import live_mode

    live = live_mode(follow=args.follow, as_json=opts.as_json, single=inputs.single)
    ci = getattr(args, "ci", DEFAULT_LEVEL)  # --ci: the level of the summary's intervals
    decided_at = args.decided_at  # --decided-at: with repeats, the share of its repeats that decides an item
    # The report is folded from the records as they are written, not read back. A resumed run (the file already
    # has records) and a run whose records other processes serialised (--workers, Ray) read the file back instead.
    # A streamed dataset's ids are the run's session ids, in the order they start (one process, no repeats): the
    # live report keeps only how many came in that order, not the ids again.
    expected = getattr(inputs.items, "ids", None)
    expected = expected if isinstance(expected, IdList) else None
    folding = LiveReport(reg.fold, prices=prices, ci=ci, decided_at=decided_at, expected=expected)
    # --fresh starts the file over: its report is this run's, folded live like a new file's
    resumed = opts.run.resume and Path(out).exists() and Path(out).stat().st_size > 0
    try:
        with otel_export(args, out), nullcontext() if resumed else observing(out, folding):
            result = run(protocol, inputs.items, opts, out, inputs.dataset, roles, live)
    except ResumeError as exc:  # said by the option that differs, not in the Python API's words
        raise CLIError(refusal(exc, spec.params, args.argv)) from None
    started = len(result.session_ids) - result.skipped - result.not_started - result.not_needed
    live_report = None if resumed else folding.result(out, started=started)
    # else streamed: flat memory whatever its length
    report, folded = live_report or report_file(out, reg.fold, prices=prices, ci=ci, decided_at=decided_at)
    chat = _chat if live is None else _printed  # a chat printed live is not printed again
    outcome = RunOutcome(
        protocol, inputs, result, out, report, reg.fold, folded.session_ids(), prices, chat, ci=ci,
        decided_at=decided_at,
    )  # fmt: skip
    fields, text = (spec.summarize or default_summary)(outcome)
    if inputs.single:  # one item's summary is its chat, not the report: its tokens and cost still belong after it
        text = "\n".join([text.rstrip("\n"), *report.usage_lines()]).strip("\n")
    payload = {**run_summary(result, out), **fields}
    if report.stability is not None and "stability" not in payload.get("report", {}):  # a summary of its own
        stable = outcome.report_of(result.session_ids).stability  # this command's repeats, as its text gives them
        payload["stability"] = stable.model_dump(mode="json") if stable is not None else None
    return finish(opts, result, payload, text, timing=not inputs.single)


def print_estimate(
    reg: Registration,
    protocol: Protocol[Any, Any],
    items: Sequence[BaseModel],
    roles: dict[str, RoleSettings],
    prices: Any,
    out: Path,
    opts: CommandOptions,
) -> int:
    """``--estimate``: the run's requests and cost bounded (or estimated) from the protocol's declared budget."""
    repeats = int(getattr(opts.run, "repeats", 1) or 1)
    stop = opts.run.decided_at if opts.run.stop_when_decided else None
    found = estimate_run(
        reg.budget, protocol, items, roles, prices, out=out, repeats=repeats, stop_when_decided=stop
    )
    if opts.as_json:
        print(json.dumps(mask_tree(found.payload()), indent=2, ensure_ascii=False))
    else:
        print(safe(mask_secrets(found.text())))
    return 0


def _session_cost(
    reg: Registration,
    protocol: Protocol[Any, Any],
    items: Sequence[BaseModel],
    roles: dict[str, RoleSettings],
    prices: Any,
    out: Path,
    opts: CommandOptions,
) -> float | None:
    """``--estimate``'s expected cost of one session, from an earlier transcript of the same protocol and models;
    None without one. Not its bound: that errs high (completions at max_tokens), and a budget held to it would stop
    a run before its first session ended."""
    repeats = int(opts.run.repeats or 1)
    found = estimate_run(reg.budget, protocol, items, roles, prices, out=out, repeats=repeats)
    usd = found.expected_cost.usd if found.expected_cost is not None else None
    sessions = len(items) * repeats
    return usd / sessions if usd is not None and sessions else None


def otel_export(args: argparse.Namespace, out: Path) -> AbstractContextManager[object]:
    """``--otel URL`` (or ``$OTEL_EXPORTER_OTLP_ENDPOINT``) and ``--phoenix URL``: the run's sessions exported as
    they end. Without the otel extra, ``--otel`` and ``--phoenix`` are errors and the environment variable alone
    a warning (it may be set for other programs)."""
    import os

    phoenix = getattr(args, "phoenix", None)
    endpoint = getattr(args, "otel", None) or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip() or None
    if not endpoint and not phoenix:
        return nullcontext()
    from voirdire.integrations import Follower, OtelError, PhoenixError

    try:
        return Follower(out, endpoint, content=args.otel_content, fresh=args.fresh, phoenix=phoenix,
                        span_events=getattr(args, "otel_span_events", False))  # fmt: skip
    except (OtelError, PhoenixError) as exc:
        if getattr(args, "otel", None) or phoenix:
            raise CLIError(str(exc)) from None
        print(f"warning: OTEL_EXPORTER_OTLP_ENDPOINT is set, but {exc}; the run goes on without it", file=sys.stderr)
        return nullcontext()


def default_concurrency(protocol: Protocol[Any, Any], roles: dict[str, RoleSettings]) -> int:
    """``--concurrency``'s default: ``REMOTE_CONCURRENCY`` when every role played by a model is a remote endpoint
    (or no role is: rules only), 1 when one runs on the embedded model, a script or a person."""
    table = RoleTable(roles)
    here = {"local", "scripted", "human"}
    return 1 if any(table[r].spec.kind in here for r in model_roles(protocol)) else REMOTE_CONCURRENCY


def _chat(transcript: Transcript, session_id: str) -> str:
    from voirdire.chat import render

    return render(transcript, session=session_id, color=False)  # printed through safe() with the summary


def _printed(transcript: Transcript, session_id: str) -> str:
    return ""


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


def print_errors(errors: dict[str, str], shown: int = 3) -> None:
    """Each distinct session error once on stderr, with how many sessions met it and the first few of them: a
    dead endpoint's 200 identical errors are one line, not 200."""
    grouped: dict[str, list[str]] = {}
    for sid, err in errors.items():  # both from outside: an item id may hold escape sequences too
        grouped.setdefault(safe(mask_secrets(err)), []).append(safe(mask_secrets(sid)))
    for err, sids in grouped.items():
        if len(sids) == 1:
            print(f"error in {sids[0]}: {err}", file=sys.stderr)
        else:
            more = f", ... ({len(sids) - shown} more)" if len(sids) > shown else ""
            print(f"error in {len(sids)} sessions ({', '.join(sids[:shown])}{more}): {err}", file=sys.stderr)


def finish(opts: CommandOptions, result: RunResult, payload: dict[str, Any], text: str, timing: bool = True) -> int:
    """The shared end of a run command: ``--report`` file, ``--json`` or the text, run time, session errors, all
    masked (``voirdire.base.secrets``).

    Exit status: 0 when every session has a verdict; 3 when a session failed (``--allow-errors``: 0); 4 when
    ``--max-errors`` stopped the run. Failed and unstarted sessions are resumed by running the command again.
    """
    payload = mask_tree(
        {**payload, "retries": result.retries, "stopped": result.stopped, "not_started": result.not_started,
         **({"not_needed": result.not_needed} if result.not_needed else {})}
    )  # fmt: skip
    if opts.report:
        write_atomic(opts.report, json.dumps(payload, indent=2, ensure_ascii=False), "--report")
    if opts.as_json:
        print(json.dumps(payload, indent=2, ensure_ascii=False))
    else:
        print(safe(mask_secrets(text)))
        if timing:
            ran = len(result.session_ids) - result.skipped - result.not_started - result.not_needed
            retried = f", {result.retries} model calls retried" if result.retries else ""
            needed = f", {result.not_needed} repeats not needed (--stop-when-decided)" if result.not_needed else ""
            print(
                f"time: {result.elapsed_s:.1f}s for {ran} session{'s' * (ran != 1)} ({result.skipped} resumed from "
                f"the transcript{retried}{needed})"
            )
        print(f"{'' if timing else chr(10)}transcript: {result.out}")
    # Sessions that met the error which stopped the run (a down endpoint) are counted in its one message.
    stopping = {sid for sid, err in result.errors.items() if result.stopped and run_stopping(err) is not None}
    print_errors({sid: err for sid, err in result.errors.items() if sid not in stopping})
    if result.stopped:
        met = f"{len(stopping)} sessions failed with it, " if stopping else ""
        print(
            f"voirdire: run stopped: {mask_secrets(result.stopped)}; {met}{result.not_started} sessions not started. "
            "The transcript holds every finished session: run the same command again to resume.",
            file=sys.stderr,
        )
        return 4
    if result.errors and not opts.allow_errors:
        print(
            f"voirdire: {len(result.errors)} of {len(result.session_ids) - result.skipped} sessions failed "
            "(exit status 3; --allow-errors exits 0); run the same command again to retry them",
            file=sys.stderr,
        )
        return 3
    return 0
