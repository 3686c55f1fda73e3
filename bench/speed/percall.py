"""Net CPU per model call of ``voirdire examine`` on scenario (b), for this checkout and, interleaved, for others:

    python -m bench.speed.percall [--rounds 3] [--sessions 1000] [--concurrency 200] [--latency-ms 100]
                                  [--version before=DIR ...] [--json-out FILE]

Each round runs every version once, in the same order, against one fake endpoint (``harness.FakeEndpoint``): its
start-up run (one session) and then the scenario, each in a process of its own (``harness.measure``: the process's
user + system CPU). Net CPU per model call is ``(CPU of the run - CPU of the start-up run) / (requests of the run -
requests of the start-up run)``, as ``python -m bench.speed`` computes it: what each call costs once the process
has started. ``--version NAME=DIR`` runs the ``voirdire`` of another checkout (``git worktree add DIR REV``;
``bench.speed.checkout``). Every version must send the same request bodies, byte for byte, as the first (checked).

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
from bench.speed.harness import REPO, FakeEndpoint, Traffic, measure

THIS = "this-checkout"


def version_argv(code: Path, argv: list[str]) -> list[str]:
    """``voirdire ...`` of the checkout at ``code`` (this one's too: the editable install may point elsewhere)."""
    return [sys.executable, "-m", "bench.speed.checkout", str(code), *argv[1:]]


def one(
    name: str, code: Path, sc: Scenario, ep: FakeEndpoint, work: Path, claims: Path, single: Path, tag: str
) -> tuple[dict[str, Any], Traffic]:
    """One version's start-up run and scenario run."""
    ep.phase(f"{tag}:startup")
    start = measure(version_argv(code, voirdire_argv(sc, ep.base_url, single, work / "start.jsonl")), work, "s", 600)
    start_traffic = ep.traffic(f"{tag}:startup")
    ep.phase(tag)
    out = work / "run.jsonl"
    proc = measure(version_argv(code, voirdire_argv(sc, ep.base_url, claims, out)), work, "r", 3600)
    traffic = ep.traffic(tag)
    verdicts = count_verdicts(out)
    for path in (out, work / "start.jsonl"):
        path.unlink(missing_ok=True)
    if proc.rc != 0 or start.rc != 0 or verdicts != sc.sessions:
        raise SystemExit(f"{name}: exit {start.rc}/{proc.rc}, {verdicts} verdicts: {proc.error_line()}")
    calls = traffic.requests - start_traffic.requests
    return {
        "cpu_s": proc.cpu_s,
        "startup_cpu_s": start.cpu_s,
        "requests": traffic.requests,
        "calls": calls,
        "net_cpu_ms_per_call": 1000 * (proc.cpu_s - start.cpu_s) / calls,
        "wall_s": proc.wall_s,
    }, traffic


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} ({min(values):.3f}–{max(values):.3f})"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.speed.percall", description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--concurrency", type=int, default=200)
    ap.add_argument("--latency-ms", type=float, default=100.0)
    ap.add_argument("--version", action="append", default=[], metavar="NAME=DIR", help="another checkout")
    ap.add_argument("--json-out", type=Path, default=None)
    args = ap.parse_args(argv)
    versions: dict[str, Path] = {THIS: REPO}
    for spec in args.version:
        name, _, folder = spec.partition("=")
        if not folder or not (Path(folder) / "voirdire").is_dir():
            ap.error(f"--version {spec!r}: expected NAME=DIR, DIR a checkout of voirdire")
        versions[name] = Path(folder).resolve()
    sc = Scenario(sessions=args.sessions, latency_ms=args.latency_ms, concurrency=args.concurrency)
    command = shlex.join(["python", "-m", "bench.speed.percall", *(sys.argv[1:] if argv is None else argv)])
    load_before = os.getloadavg()
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in versions}
    bodies: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="voirdire-percall-") as tmp:
        work = Path(tmp)
        claims, single = write_claims(work / "claims.jsonl", sc.sessions), write_claims(work / "one.jsonl", 1)
        ep = FakeEndpoint(sc.latency_ms, 0)
        try:
            reference: Traffic | None = None
            for r in range(args.rounds):
                for i, (name, code) in enumerate(versions.items()):
                    print(f"[percall] round {r + 1}: {name}", file=sys.stderr, flush=True)
                    row, traffic = one(name, code, sc, ep, work, claims, single, f"v{i}-{r}")
                    rows[name].append(row)
                    if reference is None:
                        reference = traffic
                    bodies[name] = "reference" if traffic is reference else traffic.same_bodies(reference)
        finally:
            ep.close()
    load_after = os.getloadavg()
    lines = [
        f"command: `{command}` ({sc.sessions} sessions, {sc.concurrency} in flight, {sc.latency_ms:g} ms; "
        f"{os.cpu_count()} CPUs; load {[round(x, 2) for x in load_before]} before, "
        f"{[round(x, 2) for x in load_after]} after)",
        "",
        "| version | net CPU ms/call, median (range) | of the medians | CPU s | start-up CPU s | wall s | bodies |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, runs in rows.items():
        where = f"{name} ({versions[name]})"
        # A start-up run is one short process: its CPU varies most; the medians' difference damps that
        calls = statistics.median([x["calls"] for x in runs])
        of_medians = (
            1000
            * (statistics.median([x["cpu_s"] for x in runs]) - statistics.median([x["startup_cpu_s"] for x in runs]))
            / calls
        )
        lines.append(
            f"| {where} | {spread([x['net_cpu_ms_per_call'] for x in runs])} | {of_medians:.3f} "
            f"| {spread([x['cpu_s'] for x in runs])} "
            f"| {spread([x['startup_cpu_s'] for x in runs])} | {spread([x['wall_s'] for x in runs])} "
            f"| {bodies[name]} |"
        )
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
