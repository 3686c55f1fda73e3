"""The read commands of any protocol's transcripts: ``list``, ``show`` and ``report``, through the registry and the
self-describing run header."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from voirdire import registry
from voirdire.base import mask_secrets, shown
from voirdire.cli.options import CLIError, add_prices_option
from voirdire.cli.plot import add_plot_options, check_plots, write_plots

if TYPE_CHECKING:
    from voirdire.transcript import Transcript


def register(sub: Any) -> None:
    """``list``, ``show`` and ``report`` in the sub-command table ``sub``."""
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
    add_ci_option(rp)
    add_decided_at_option(rp)
    add_prices_option(rp)
    add_plot_options(rp)
    rp.add_argument(
        "--fail-under", type=_threshold, action="append", default=[], metavar="METRIC=VALUE",
        help="exit 1 when the report's METRIC (accuracy, F1, kappa, as the report prints it; METRIC.low: the lower "
        "end of its interval) is below VALUE (0.8 or 80%%), printing which; repeatable: a CI gate",
    )  # fmt: skip
    rp.set_defaults(func=cmd_report)


def _threshold(text: str) -> Any:
    from voirdire.reports import GateError, Threshold

    try:
        return Threshold.parse(text)
    except GateError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix(f"--fail-under {text!r}: ")) from None


def add_ci_option(p: argparse.ArgumentParser) -> None:
    """``--ci LEVEL``: of ``report`` and of every run command's summary."""
    from voirdire.certificate import DEFAULT_LEVEL

    p.add_argument(
        "--ci", type=ci_level, default=DEFAULT_LEVEL, metavar="LEVEL",
        help=f"level of the intervals on the report's numbers (default {DEFAULT_LEVEL}; 0: none)",
    )  # fmt: skip


def add_decided_at_option(p: argparse.ArgumentParser) -> None:
    """``--decided-at SHARE``: of ``report`` and of every run command's summary (a run with repeats)."""
    from voirdire.reports import DEFAULT_DECIDED_AT

    p.add_argument(
        "--decided-at", type=decided_share, default=DEFAULT_DECIDED_AT, metavar="SHARE",
        help="with repeats: an item is decided when one verdict holds at least this share of its repeats, else "
        f"undecided (above 0.5, at most 1; default {DEFAULT_DECIDED_AT})",
    )  # fmt: skip


def decided_share(text: str) -> float:
    """``--decided-at``: a majority's share, above 0.5 and at most 1."""
    from voirdire.reports import check_decided_at

    try:
        share = float(text)
        check_decided_at(share)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a majority's share: give one above 0.5, at most 1 (0.8)"
        ) from None
    return share


def ci_level(text: str) -> float:
    """``--ci``: a level strictly between 0 and 1, or 0 for no intervals."""
    try:
        level = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r} (a level such as 0.95, or 0 for none)") from None
    if level != 0 and not 0 < level < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a level: give one between 0 and 1 (0.95), or 0 for none")
    return level


def cmd_list(args: argparse.Namespace) -> int:
    cards = {name: registry.card(name) for name in args.protocol} if args.protocol else registry.cards()
    if not args.graph and not args.json:  # what the cards say: no protocol is imported
        for c in cards.values():
            friendly = f"  (voirdire {c.command})" if c.command else ""
            print(f"{c.name}{friendly}\n    roles: {', '.join(c.roles) or 'none (model-free)'}")
            if c.paper:
                print(f"    paper: {c.paper}")
        return 0
    regs = {name: c.load() for name, c in cards.items()}
    if args.graph:
        print("\n\n".join(r.protocol.machine.mermaid(title=r.name) for r in regs.values()))
        return 0
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


def load_records(path: Path) -> Transcript:
    """A transcript to read back; a file with no record in it (an empty file, or not a transcript at all) is an
    error rather than empty output."""
    from voirdire.transcript import load

    t = load(path)
    if t.header is None and not t.sessions:
        raise CLIError(f"{path}: not a transcript (no run header and no session events in it)")
    return t


def cmd_show(args: argparse.Namespace) -> int:
    from voirdire.chat import render, summary_line  # rich and the live chat: imported by the command that prints
    from voirdire.session import StateMachine

    t = load_records(args.transcript)
    if args.graph:
        if t.header is None or not t.header.transitions:
            raise CLIError(f"{t.path}: the run header records no state machine (written before schema 2)")
        print(shown(StateMachine.from_record(t.header.transitions).mermaid(title=t.header.protocol)))
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


def cmd_report(args: argparse.Namespace) -> int:
    from voirdire.certificate import CertificateReading, certificate_of, gold_of_rows
    from voirdire.chat import stage  # rich: imported by the command that prints, not by `voirdire --help`
    from voirdire.reports import DEFAULT_DECIDED_AT, load_prices, report_file

    check_plots(args)
    prices = load_prices(args.prices)  # packaged, then $VOIRDIRE_PRICES, then --prices FILE
    regs = registry.registrations()
    fold_for = registry.report_folds()  # the header's protocol's report; a protocol not installed: the counts

    path = args.transcript
    # The certificate's reads (its verdicts, their guarantees) folded in the same pass as the report: the file is
    # parsed once. A path that is no file gets the report's own error, as before.
    reading = CertificateReading(path) if Path(path).is_file() else None
    with stage(f"reading {path}"):  # streamed: flat memory whatever its length
        report, folded = report_file(
            path, fold_for, prices=prices, ci=args.ci, decided_at=args.decided_at,
            alongside=reading.folds() if reading is not None else (),
        )  # fmt: skip
    if not folded.headers and not folded.session_ids():
        raise CLIError(f"{path}: not a transcript (no run header and no session events in it)")
    if not folded.headers:
        raise CLIError(f"{path}: no run header, so no protocol to report on")
    ran = list(dict.fromkeys(h.protocol for h in folded.headers))
    if len(ran) > 1:  # one protocol's report over another's sessions would be silently wrong
        raise CLIError(
            f"{path}: holds runs of {len(ran)} protocols ({', '.join(map(shown, ran))}); a report is of one: "
            "keep each protocol's runs in a transcript of its own (--out)"
        )
    if folded.headers[-1].protocol not in regs:
        missing = shown(folded.headers[-1].protocol)
        print(f"warning: protocol {missing!r} is not installed; counts only", file=sys.stderr)
    with stage("certificate"):  # the verdicts against people's labels or gold, guarantees (docs/certificate.md)
        if reading is None:
            cert = certificate_of(path, report, level=args.ci)
        else:  # the report's rows hold the gold report_gold would read again, unless --decided-at moved them
            gold = gold_of_rows(report) if args.decided_at == DEFAULT_DECIDED_AT else None
            cert = reading.certificate(report, level=args.ci, gold_rows=gold)
    # Before anything is printed: a threshold whose name finds no number is exit status 2. The rows are not read
    # back for it (a folded report's rows come from its spool).
    checks = _gate(args.fail_under, report, cert)
    # Masked like a run's output: model labels (endpoints) now appear in the usage lines and JSON.
    if args.json:
        # through pydantic's JSON, which writes an undefined number (nan) as null, never as bare NaN
        whole = {**json.loads(report.model_dump_json()), "certificate": json.loads(cert.model_dump_json())}
        print(mask_secrets(json.dumps(whole, indent=2, ensure_ascii=False)))
    else:
        print(mask_secrets(shown(report.text() + "\n" + cert.text())))
    write_plots(args, cert.charts())  # the certificate's charts beside the report's
    failed = [c for c in checks if not c.passed]
    for c in checks:
        print(f"{'fail-under: FAILED' if not c.passed else 'fail-under: ok'}: {shown(c.text())}", file=sys.stderr)
    if failed:
        print(f"voirdire: {len(failed)} of {len(checks)} --fail-under thresholds not met (exit status 1)",
              file=sys.stderr)  # fmt: skip
        return 1
    return 0


def _gate(thresholds: list[Any], report: Any, cert: Any) -> list[Any]:
    from voirdire.reports import GateError, check_thresholds

    if not thresholds:
        return []
    numbers = json.loads(report.model_dump_json(exclude={"rows"}))
    try:
        return check_thresholds(thresholds, numbers, {"certificate": json.loads(cert.model_dump_json())})
    except GateError as exc:
        raise CLIError(str(exc)) from None
