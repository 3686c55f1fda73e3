"""Net CPU per model call of ``voirdire examine`` on scenario (b), for this checkout and, interleaved, for others:

    python -m bench.speed.percall [--rounds 3] [--sessions 1000] [--concurrency 200] [--latency-ms 100]
                                  [--version before=DIR ...] [--json-out FILE] [--pool FILE ...] [--goal-ms 0.5]

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

Whether the net measure meets the goal (``--goal-ms``, issue 32's 0.5 ms a call) is judged on the median's 95%
interval, not on the median alone: the interval of ``scipy.stats.quantile_test``, from the rounds' order statistics
(no assumption on their distribution; six rounds at least). The goal is *met* when the whole interval is at or
under it, *not met* when the whole interval is above it, and *not decided* when the interval holds it: then the
host cannot tell, and more rounds narrow the interval only if the median is not on the goal itself.
``--pool FILE`` adds the rounds of an earlier invocation's JSON (``--json-out``, or the path it printed) to each
version of the same name, for the table and the verdict; the earlier runs must be of the same scenario (sessions,
concurrency, latency) and interpreter, which the JSON records (with each version's commit). ``--rounds 0 --pool
FILE ...`` judges the pooled rounds without running any.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shlex
import statistics
import subprocess
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


def table_row(where: str, runs: list[dict[str, Any]], bodies: str, interval: tuple[float, float] | None) -> str:
    # A start-up run is one short process: its CPU varies most; the medians' difference damps that
    calls = statistics.median([x["calls"] for x in runs])
    of_medians = (
        1000 * (statistics.median([x["cpu_s"] for x in runs]) - statistics.median([x["startup_cpu_s"] for x in runs]))
    ) / calls
    marginal = [x["marginal_cpu_ms_per_call"] for x in runs if "marginal_cpu_ms_per_call" in x]
    doubled = [x["doubled_cpu_s"] for x in runs if "doubled_cpu_s" in x]
    ci = f"{interval[0]:.3f}–{interval[1]:.3f}" if interval is not None else "—"
    return (
        f"| {where} | {len(runs)} | {spread([x['net_cpu_ms_per_call'] for x in runs])} | {ci} | {of_medians:.3f} "
        f"| {spread(marginal)} "
        f"| {spread([x['cpu_s'] for x in runs])} | {spread(doubled)} "
        f"| {spread([x['startup_cpu_s'] for x in runs])} | {spread([x['wall_s'] for x in runs])} | {bodies} |"
    )


PYTHON = platform.python_version()  # what the runs ran on (the children are this interpreter)
LEVEL = 0.95  # the median's interval
MIN_ROUNDS = 6  # fewer rounds than this have no 95% interval for their median (2 * 0.5**5 > 0.05)


def median_interval(values: list[float], level: float = LEVEL) -> tuple[float, float] | None:
    """The distribution-free interval of the median of ``values`` at ``level`` (order statistics, as
    ``scipy.stats.quantile_test`` gives it); None when there are too few values for one."""
    if len(values) < MIN_ROUNDS:
        return None
    from scipy.stats import quantile_test

    ci = quantile_test(values, q=statistics.median(values), p=0.5).confidence_interval(level)
    low, high = float(ci.low), float(ci.high)
    return None if math.isnan(low) or math.isnan(high) else (low, high)


def goal_verdict(interval: tuple[float, float] | None, goal: float) -> str:
    """Whether a median whose interval is ``interval`` is at or under ``goal``: met, not met, or not decided."""
    if interval is None:
        return f"not decided: fewer than {MIN_ROUNDS} rounds give the median no {LEVEL:.0%} interval"
    low, high = interval
    if high <= goal:
        return f"met (the median's {LEVEL:.0%} interval is at or under {goal:g})"
    if low > goal:
        return f"not met (the median's {LEVEL:.0%} interval is above {goal:g})"
    return f"not decided (the median's {LEVEL:.0%} interval holds {goal:g}: this host cannot tell)"


def scenario_of(record: dict[str, Any], ap: argparse.ArgumentParser) -> dict[str, float]:
    """The scenario an earlier invocation's JSON ran: as it recorded it, or (older files) read from its command."""
    if "scenario" in record:
        return {k: float(v) for k, v in record["scenario"].items()}
    # "python -m bench.speed.percall ...": the words before the options are left over, not errors
    earlier, _ = ap.parse_known_args(shlex.split(str(record.get("command", ""))))
    return {"sessions": float(earlier.sessions), "concurrency": float(earlier.concurrency),
            "latency_ms": float(earlier.latency_ms)}  # fmt: skip


def pooled_rows(
    files: list[Path], ap: argparse.ArgumentParser, scenario: dict[str, float], names: list[str]
) -> dict[str, list[dict[str, Any]]]:
    """The rounds of earlier invocations' JSON ``files``, by version name (only the names asked for now); a file of
    another scenario, or one that is not such a JSON, is an error naming it."""
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    for file in files:
        try:
            record = json.loads(file.read_text())
            runs = record["rows"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            ap.error(f"--pool {file}: not the JSON of an earlier run of this benchmark ({exc})")
        theirs = scenario_of(record, ap)
        if theirs != scenario:
            ap.error(f"--pool {file}: its runs are of another scenario ({theirs}, not {scenario})")
        if record.get("python", PYTHON) != PYTHON:  # older files did not record it
            ap.error(f"--pool {file}: its runs are of another interpreter ({record['python']}, not {PYTHON})")
        for name in names:
            rows[name].extend(runs.get(name, []))
    return rows


def commit_of(code: Path) -> str | None:
    """The commit checked out at ``code`` (recorded with the rounds, so that pooled files can be told apart)."""
    done = subprocess.run(["git", "-C", str(code), "rev-parse", "HEAD"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None


def run_rounds(
    versions: dict[str, Path], sc: Scenario, rounds: int, no_marginal: bool,
    rows: dict[str, list[dict[str, Any]]], bodies: dict[str, str],
) -> None:  # fmt: skip
    """``rounds`` rounds of every version, interleaved, against one fake endpoint: each round's row appended to
    ``rows[name]``, and ``bodies[name]`` how its request bodies compare with the first version's."""
    with tempfile.TemporaryDirectory(prefix="voirdire-percall-") as tmp:
        work = Path(tmp)
        sizes = [1, sc.sessions] + ([] if no_marginal else [2 * sc.sessions])
        claims = {n: write_claims(work / f"claims-{n}.jsonl", n) for n in sizes}
        ep = FakeEndpoint(sc.latency_ms, 0)
        try:
            reference: dict[int, Traffic] | None = None
            for r in range(rounds):
                for i, (name, code) in enumerate(versions.items()):
                    print(f"[percall] round {r + 1}: {name}", file=sys.stderr, flush=True)
                    row, traffic = one(name, code, sc, ep, work, claims, f"v{i}-{r}")
                    rows[name].append(row)
                    if reference is None:
                        reference = traffic
                    bodies[name] = body_check(traffic, reference, sizes[1:])
        finally:
            ep.close()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.speed.percall", description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--concurrency", type=int, default=200)
    ap.add_argument("--latency-ms", type=float, default=100.0)
    ap.add_argument("--version", action="append", default=[], metavar="NAME=DIR", help="another checkout")
    ap.add_argument("--no-marginal", action="store_true", help="skip the 2N runs (the net measure only)")
    ap.add_argument("--json-out", type=Path, default=None)
    ap.add_argument(
        "--pool", action="append", type=Path, default=[], metavar="FILE",
        help="an earlier invocation's JSON: its rounds are added to each version of the same name",
    )  # fmt: skip
    ap.add_argument("--goal-ms", type=float, default=0.5, help="the net CPU a call to judge the median against")
    args = ap.parse_args(argv)
    if args.rounds < 0 or (args.rounds == 0 and not args.pool):
        ap.error("--rounds: at least 1, or 0 with --pool")
    versions = checkout_versions(ap, args.version, THIS)
    sc = Scenario(sessions=args.sessions, latency_ms=args.latency_ms, concurrency=args.concurrency)
    scenario = {"sessions": float(sc.sessions), "concurrency": float(sc.concurrency), "latency_ms": sc.latency_ms}
    earlier = pooled_rows(args.pool, ap, scenario, list(versions))
    command = shlex.join(["python", "-m", "bench.speed.percall", *(sys.argv[1:] if argv is None else argv)])
    load_before = os.getloadavg()
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in versions}
    bodies: dict[str, str] = {name: "pooled only" for name in versions}
    if args.rounds:
        run_rounds(versions, sc, args.rounds, args.no_marginal, rows, bodies)
    load_after = os.getloadavg()
    pooled = sum(len(r) for r in earlier.values())
    where = f"; {pooled} earlier rounds pooled from {len(args.pool)} file(s)" if args.pool else ""
    lines = [
        f"command: `{command}` ({sc.sessions} sessions, {sc.concurrency} in flight, {sc.latency_ms:g} ms; "
        f"{os.cpu_count()} CPUs; load {[round(x, 2) for x in load_before]} before, "
        f"{[round(x, 2) for x in load_after]} after{where})",
        "",
        "| version | rounds | net CPU ms/call, median (range) | median's 95% interval | of the medians "
        "| marginal CPU ms/call (2N - N) | CPU s (N) | CPU s (2N) | start-up CPU s | wall s | bodies |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    verdicts = []
    for name in versions:
        runs = rows[name] + earlier[name]
        if not runs:
            continue
        interval = median_interval([x["net_cpu_ms_per_call"] for x in runs])
        lines.append(table_row(f"{name} ({versions[name]})", runs, bodies[name], interval))
        verdicts.append(f"- {name}: net CPU a call ≤ {args.goal_ms:g} ms: {goal_verdict(interval, args.goal_ms)}")
    lines += ["", *verdicts]
    table = "\n".join(lines)
    print(table)
    if not args.rounds:
        return  # nothing run: nothing new to keep
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out = args.json_out or Path(tempfile.gettempdir()) / "voirdire-bench" / f"percall-{stamp}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    record = {
        "command": command, "repo": str(REPO), "python": PYTHON, "scenario": scenario, "rows": rows,
        "bodies": bodies, "table": table, "pooled": [str(f) for f in args.pool],
        "commits": {name: commit_of(code) for name, code in versions.items()},
    }  # fmt: skip
    out.write_text(json.dumps(record | {"load": [load_before, load_after]}, indent=2, default=str) + "\n")
    print(f"\nJSON: {out}")


if __name__ == "__main__":
    main()
