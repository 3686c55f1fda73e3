"""Net CPU per model call of ``voirdire examine`` on scenario (b), for this checkout and, interleaved, for others:

    python -m bench.speed.percall [--rounds 3] [--sessions 1000] [--concurrency 200] [--latency-ms 100]
                                  [--version before=DIR ...] [--json-out FILE]

Each round runs every version once, in the same order, against one fake endpoint (``harness.FakeEndpoint``): its
start-up run (one session), the scenario (N sessions) and the scenario doubled (2N sessions), each in a process of
its own (``harness.measure``: the process's user + system CPU). Two measures of what a model call costs:

- **net** (the old one, as ``python -m bench.speed`` computes it): ``(CPU of the N run - CPU of the start-up run) /
  (requests of the N run - requests of the start-up run)``. Everything a run of N sessions does that a one-session
  run does not is charged to its calls, fixed costs included: anything paid once per run above one session. (A
  one-session run imports what the N run imports, the end-of-run report's scipy included: the same 2,091 modules
  on 2026-11-27, ``-X importtime``; so start-up's imports cancel.)
- **marginal**: ``(CPU of the 2N run - CPU of the N run) / (requests of the 2N run - requests of the N run)``: what
  N more sessions' calls cost, the fixed costs of a run cancelling out (both runs make them); what a call costs once
  the run is going.

``--no-marginal`` skips the 2N runs (the old measure only). ``--version NAME=DIR`` runs the ``voirdire`` of another
checkout (``git worktree add DIR REV``; ``bench.speed.checkout``). Every version must send the same request bodies,
byte for byte, as the first (checked for the N and the 2N runs).

Prints a markdown table (median and range over the rounds; "of the medians": the median run's CPU less the median
start-up's, per call, which damps the start-up runs' spread; the load average before and after); the shared
machine's CPU time per call moves with its load, so compare versions within one invocation.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.speed.cli import count_verdicts, write_claims
from bench.speed.commands import Scenario, voirdire_argv
from bench.speed.harness import REPO, FakeEndpoint, Proc, Traffic, checkout_versions, measure

THIS = "this-checkout"


def version_argv(code: Path, argv: list[str]) -> list[str]:
    """``voirdire ...`` of the checkout at ``code`` (this one's too: the editable install may point elsewhere)."""
    return [sys.executable, "-m", "bench.speed.checkout", str(code), *argv[1:]]


def run_once(
    name: str, code: Path, sc: Scenario, ep: FakeEndpoint, work: Path, claims: Path, sessions: int, tag: str
) -> tuple[Proc, Traffic]:
    """One measured ``voirdire examine`` of ``claims`` (``sessions`` of them); every session must end in a verdict."""
    ep.phase(tag)
    out = work / "run.jsonl"
    proc = measure(version_argv(code, voirdire_argv(sc, ep.base_url, claims, out)), work, "r", 3600)
    traffic = ep.traffic(tag)
    verdicts = count_verdicts(out)
    out.unlink(missing_ok=True)
    if proc.rc != 0 or verdicts != sessions:
        raise SystemExit(f"{name} ({tag}): exit {proc.rc}, {verdicts} of {sessions} verdicts: {proc.error_line()}")
    return proc, traffic


def one(
    name: str, code: Path, sc: Scenario, ep: FakeEndpoint, work: Path, claims: dict[int, Path], tag: str
) -> tuple[dict[str, Any], dict[int, Traffic]]:
    """One version's start-up run (one session), scenario run (N) and, unless skipped, doubled run (2N)."""
    procs: dict[int, Proc] = {}
    traffic: dict[int, Traffic] = {}
    for n, path in claims.items():
        procs[n], traffic[n] = run_once(name, code, sc, ep, work, path, n, f"{tag}:{n}")
    start, run = procs[1], procs[sc.sessions]
    calls = traffic[sc.sessions].requests - traffic[1].requests
    row: dict[str, Any] = {
        "cpu_s": run.cpu_s,
        "startup_cpu_s": start.cpu_s,
        "requests": traffic[sc.sessions].requests,
        "calls": calls,
        "net_cpu_ms_per_call": 1000 * (run.cpu_s - start.cpu_s) / calls,
        "wall_s": run.wall_s,
    }
    doubled = 2 * sc.sessions
    if doubled in procs:
        more = traffic[doubled].requests - traffic[sc.sessions].requests
        row |= {
            "doubled_cpu_s": procs[doubled].cpu_s,
            "doubled_requests": traffic[doubled].requests,
            "marginal_calls": more,
            "marginal_cpu_ms_per_call": 1000 * (procs[doubled].cpu_s - run.cpu_s) / more,
        }
    return row, traffic


def spread(values: list[float]) -> str:
    if not values:
        return "—"
    return f"{statistics.median(values):.3f} ({min(values):.3f}–{max(values):.3f})"


def body_check(traffic: dict[int, Traffic], reference: dict[int, Traffic], sizes: list[int]) -> str:
    """``reference`` for the first version; else how this version's bodies compare with it, run by run."""
    if traffic is reference:
        return "reference"
    each = {n: traffic[n].same_bodies(reference[n]) for n in sizes}
    if len(set(each.values())) == 1:
        return next(iter(each.values()))
    return ", ".join(f"{n}: {verdict}" for n, verdict in each.items())


def table_row(where: str, runs: list[dict[str, Any]], bodies: str) -> str:
    # A start-up run is one short process: its CPU varies most; the medians' difference damps that
    calls = statistics.median([x["calls"] for x in runs])
    of_medians = (
        1000 * (statistics.median([x["cpu_s"] for x in runs]) - statistics.median([x["startup_cpu_s"] for x in runs]))
    ) / calls
    marginal = [x["marginal_cpu_ms_per_call"] for x in runs if "marginal_cpu_ms_per_call" in x]
    doubled = [x["doubled_cpu_s"] for x in runs if "doubled_cpu_s" in x]
    return (
        f"| {where} | {spread([x['net_cpu_ms_per_call'] for x in runs])} | {of_medians:.3f} | {spread(marginal)} "
        f"| {spread([x['cpu_s'] for x in runs])} | {spread(doubled)} "
        f"| {spread([x['startup_cpu_s'] for x in runs])} | {spread([x['wall_s'] for x in runs])} | {bodies} |"
    )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.speed.percall", description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--concurrency", type=int, default=200)
    ap.add_argument("--latency-ms", type=float, default=100.0)
    ap.add_argument("--version", action="append", default=[], metavar="NAME=DIR", help="another checkout")
    ap.add_argument("--no-marginal", action="store_true", help="skip the 2N runs (the net measure only)")
    ap.add_argument("--json-out", type=Path, default=None)
    args = ap.parse_args(argv)
    versions = checkout_versions(ap, args.version, THIS)
    sc = Scenario(sessions=args.sessions, latency_ms=args.latency_ms, concurrency=args.concurrency)
    command = shlex.join(["python", "-m", "bench.speed.percall", *(sys.argv[1:] if argv is None else argv)])
    load_before = os.getloadavg()
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in versions}
    bodies: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="voirdire-percall-") as tmp:
        work = Path(tmp)
        sizes = [1, sc.sessions] + ([] if args.no_marginal else [2 * sc.sessions])
        claims = {n: write_claims(work / f"claims-{n}.jsonl", n) for n in sizes}
        ep = FakeEndpoint(sc.latency_ms, 0)
        try:
            reference: dict[int, Traffic] | None = None
            for r in range(args.rounds):
                for i, (name, code) in enumerate(versions.items()):
                    print(f"[percall] round {r + 1}: {name}", file=sys.stderr, flush=True)
                    row, traffic = one(name, code, sc, ep, work, claims, f"v{i}-{r}")
                    rows[name].append(row)
                    if reference is None:
                        reference = traffic
                    bodies[name] = body_check(traffic, reference, sizes[1:])
        finally:
            ep.close()
    load_after = os.getloadavg()
    lines = [
        f"command: `{command}` ({sc.sessions} sessions, {sc.concurrency} in flight, {sc.latency_ms:g} ms; "
        f"{os.cpu_count()} CPUs; load {[round(x, 2) for x in load_before]} before, "
        f"{[round(x, 2) for x in load_after]} after)",
        "",
        "| version | net CPU ms/call, median (range) | of the medians | marginal CPU ms/call (2N - N) | CPU s (N) "
        "| CPU s (2N) | start-up CPU s | wall s | bodies |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, runs in rows.items():
        lines.append(table_row(f"{name} ({versions[name]})", runs, bodies[name]))
    table = "\n".join(lines)
    print(table)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out = args.json_out or Path(tempfile.gettempdir()) / "voirdire-bench" / f"percall-{stamp}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    record = {"command": command, "repo": str(REPO), "rows": rows, "bodies": bodies, "table": table}
    out.write_text(json.dumps(record | {"load": [load_before, load_after]}, indent=2, default=str) + "\n")
    print(f"\nJSON: {out}")


if __name__ == "__main__":
    main()
