"""The speed benchmark: voirdire, a bare openai-SDK driver, a bare autogen-client driver and Inspect AI, each in a
process of its own, against the same fake OpenAI-compatible endpoint, on the same claims, in one command.

    python -m bench.speed --sessions 1000 --latency-ms 100 --concurrency 200 --examinations 1 \\
        --drivers voirdire,raw,autogen,inspect [--followups K] [--answers independent] [--voirdire-args "--workers 2"]
    python -m bench.speed --rss-sweep 100,1000,10000 [--latency-ms 5] [--concurrency 200]

Prints a markdown table (with the command that produced it) and writes JSON (``--json-out``, else to a temporary
folder: a run leaves nothing in the checkout). What each column means and how the critical-path bound is
computed: docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.speed.commands import DEFAULT_DRIVERS, DRIVERS, Scenario, driver_argv, parse_extra
from bench.speed.examination import bound_s
from bench.speed.harness import REPO, FakeEndpoint, Proc, Traffic, measure


def write_claims(path: Path, n: int) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            f.write(
                json.dumps({"id": f"claim-{i}", "claim": f"Claim number {i}: the capital of Country{i} is City{i}."})
            )
            f.write("\n")
    return path


def count_verdicts(transcript: Path) -> int:
    if not transcript.exists():
        return 0
    with transcript.open("rb") as f:
        return sum(1 for line in f if b'"kind":"verdict"' in line)


def first_session_error(transcript: Path) -> str | None:
    """The first session error a voirdire transcript records (a run that exits 3 names only how many failed)."""
    if not transcript.exists():
        return None
    with transcript.open("rb") as f:
        for line in f:
            if b'"kind":"error"' in line:
                event = json.loads(line)
                return f"{event.get('session_id')}: {event.get('message')}"[:300]
    return None


def _round(x: float | None, digits: int = 3) -> float | None:
    return None if x is None else round(x, digits)


def run_driver(
    driver: str, sc: Scenario, ep: FakeEndpoint, workdir: Path, claims: Path, one: Path, startup: bool, timeout_s: float
) -> dict[str, Any]:
    """One driver: its start-up run (one session), then the scenario, each measured; the endpoint's view of both."""
    row: dict[str, Any] = {"driver": driver}
    start_proc: Proc | None = None
    start_traffic = Traffic()
    if startup:
        ep.phase(f"{driver}:startup")
        start_proc = measure(
            driver_argv(driver, sc, ep.base_url, one, workdir, "startup"), workdir, f"{driver}-startup", timeout_s
        )
        start_traffic = ep.traffic(f"{driver}:startup")
    ep.phase(driver)
    server_cpu = ep.cpu_s()
    proc = measure(driver_argv(driver, sc, ep.base_url, claims, workdir, "run"), workdir, driver, timeout_s)
    server_cpu = ep.cpu_s() - server_cpu
    traffic = ep.traffic(driver)
    error = proc.error_line() if proc.rc not in (0, None) or proc.timed_out else None
    if driver == "voirdire":
        verdicts = count_verdicts(workdir / "voirdire-run.jsonl")
        session_error = first_session_error(workdir / "voirdire-run.jsonl")
        if session_error:
            error = f"{error}; first: {session_error}" if error else session_error
    else:
        verdicts = int(proc.result_line().get("verdicts", 0))
        error = error or proc.result_line().get("first_error")
    requests = traffic.requests
    row |= {
        "command": proc.command(),
        "rc": proc.rc,
        "timed_out": proc.timed_out,
        "error": error,
        "verdicts": verdicts,
        "wall_s": _round(proc.wall_s),
        "cpu_s": _round(proc.cpu_s),
        "user_s": _round(proc.user_s),
        "sys_s": _round(proc.sys_s),
        "peak_rss_mb": _round(proc.peak_rss_mb, 1),
        "cpu_ms_per_call": _round(1000 * proc.cpu_s / requests) if requests else None,
        "requests_per_verdict": _round(requests / sc.sessions) if sc.sessions else None,
        "server_cpu_s": _round(server_cpu),
        **traffic.summary(),
    }
    if start_proc is not None:
        extra_requests = requests - start_traffic.requests
        row |= {
            "startup": {
                "command": start_proc.command(),
                "rc": start_proc.rc,
                "wall_s": _round(start_proc.wall_s),
                "cpu_s": _round(start_proc.cpu_s),
                "peak_rss_mb": _round(start_proc.peak_rss_mb, 1),
                "requests": start_traffic.requests,
            },
            "startup_cpu_s": _round(start_proc.cpu_s),
            "net_cpu_ms_per_call": _round(1000 * (proc.cpu_s - start_proc.cpu_s) / extra_requests)
            if extra_requests > 0
            else None,
        }
    row["_traffic"] = traffic
    return row


def machine() -> dict[str, Any]:
    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=False).stdout.strip()
        except OSError:
            return ""

    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
        "git_head": git("rev-parse", "--short", "HEAD"),
        "git_dirty_files": len(git("status", "--porcelain", "--untracked-files=no").splitlines()),
    }


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


COLUMNS = (
    "driver",
    "rc",
    "verdicts",
    "wall s",
    "span s",
    "wall/bound",
    "span/bound",
    "span/run bound",
    "requests",
    "req/verdict",
    "identical",
    "CPU s",
    "CPU ms/call",
    "start-up CPU s",
    "net CPU ms/call",
    "peak RSS MB",
    "server CPU s",
    "max in flight",
    "connections",
)


def scenario_table(result: dict[str, Any]) -> str:
    b = result["bound"]
    lines = [
        f"command: `{result['command']}`",
        "",
        f"{result['sessions']} sessions, {result['concurrency']} in flight, latency {result['latency_ms']:g} ms, "
        f"{result['examinations']} examination(s), {result['followups']} follow-up round(s); "
        f"{b['requests_per_session']} requests a session expected; "
        f"critical path {b['ideal_path_calls']} calls (ideal graph) → bound {b['ideal_s']:.2f} s; "
        f"this run's graph ({b['run_graph']}) {b['run_path_calls']} calls → {b['run_s']:.2f} s. "
        f"Machine: {result['machine']['cpus']} CPUs, load {result['machine']['loadavg']} at start.",
        "",
        "| " + " | ".join([*COLUMNS, f"bodies vs {result['reference']}"]) + " |",
        "|" + "---|" * (len(COLUMNS) + 1),
    ]
    for r in result["drivers"]:
        lines.append(
            "| "
            + " | ".join(
                [
                    r["driver"],
                    _fmt(r["rc"]),
                    _fmt(r["verdicts"]),
                    _fmt(r["wall_s"]),
                    _fmt(r["span_s"]),
                    _fmt(r.get("wall_over_bound")),
                    _fmt(r.get("span_over_bound")),
                    _fmt(r.get("span_over_run_bound")),
                    _fmt(r["requests"]),
                    _fmt(r["requests_per_verdict"]),
                    _fmt(r["identical_requests"]),
                    _fmt(r["cpu_s"]),
                    _fmt(r["cpu_ms_per_call"], 3),
                    _fmt(r.get("startup_cpu_s")),
                    _fmt(r.get("net_cpu_ms_per_call"), 3),
                    _fmt(r["peak_rss_mb"], 1),
                    _fmt(r["server_cpu_s"]),
                    _fmt(r["max_in_flight"]),
                    _fmt(r["connections"]),
                    _fmt(r.get("bodies")),
                ]
            )
            + " |"
        )
    errors = [f"- {r['driver']}: {r['error']}" for r in result["drivers"] if r.get("error")]
    if errors:
        lines += ["", "errors:", *errors]
    return "\n".join(lines)


def run_scenario(sc: Scenario, drivers: list[str], args: argparse.Namespace, command: str) -> dict[str, Any]:
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="voirdire-speed-"))
    workdir.mkdir(parents=True, exist_ok=True)
    claims = write_claims(workdir / "claims.jsonl", sc.sessions)
    one = write_claims(workdir / "claims-1.jsonl", 1)
    shape, p = sc.shape(), sc.params()
    ideal_path, run_path = shape.critical_path(), shape.run_path(p)
    latency_s = sc.latency_ms / 1000
    bound = {
        "formula": "ceil(sessions / concurrency) * path_calls * latency",
        "requests_per_session": shape.requests_per_session(),
        "ideal_path_calls": ideal_path,
        "ideal_s": bound_s(sc.sessions, sc.concurrency, ideal_path, latency_s),
        "run_graph": f"answers {p.answers}, examinations {'together' if p.concurrent_examinations else 'in turn'}",
        "run_path_calls": run_path,
        "run_s": bound_s(sc.sessions, sc.concurrency, run_path, latency_s),
    }
    result: dict[str, Any] = {
        "command": command,
        "mode": "scenario",
        "sessions": sc.sessions,
        "latency_ms": sc.latency_ms,
        "concurrency": sc.concurrency,
        "examinations": sc.examinations,
        "followups": sc.followups,
        "sampling_temperature": sc.sampling_temperature,
        "answers": p.answers,
        "concurrent_examinations": p.concurrent_examinations,
        "voirdire_args": list(sc.voirdire_args),
        "bound": bound,
        "machine": machine(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "workdir": str(workdir),
        "drivers": [],
    }
    ep = FakeEndpoint(sc.latency_ms, sc.followups)
    try:
        for driver in drivers:
            print(f"[bench.speed] {driver} ...", file=sys.stderr, flush=True)
            row = run_driver(driver, sc, ep, workdir, claims, one, not args.no_startup, args.timeout_s)
            if bound["ideal_s"] and row["verdicts"] == sc.sessions:  # a failed run has no meaningful ratio
                row["wall_over_bound"] = _round(row["wall_s"] / bound["ideal_s"])
                row["span_over_bound"] = _round(row["span_s"] / bound["ideal_s"])
                row["span_over_run_bound"] = _round(row["span_s"] / bound["run_s"])
            result["drivers"].append(row)
    finally:
        ep.close()
        result["machine"]["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
        if not args.keep_workdir and not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    rows = result["drivers"]
    ran = [r for r in rows if r["requests"]]
    reference = next((r for r in ran if r["driver"] == "voirdire"), ran[0] if ran else None)
    result["reference"] = reference["driver"] if reference else "–"
    traffics = [r.pop("_traffic") for r in rows]
    ref_traffic = traffics[rows.index(reference)] if reference is not None else None
    for r, traffic in zip(rows, traffics, strict=True):
        if ref_traffic is not None:
            r["bodies"] = (
                "reference" if r is reference else traffic.same_bodies(ref_traffic) if traffic.requests else None
            )
    return result


def run_sweep(counts: list[int], sc: Scenario, args: argparse.Namespace, command: str) -> dict[str, Any]:
    """voirdire alone at several session counts: its peak RSS should not grow with the dataset."""
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="voirdire-speed-rss-"))
    workdir.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {
        "command": command,
        "mode": "rss-sweep",
        "latency_ms": sc.latency_ms,
        "concurrency": sc.concurrency,
        "examinations": sc.examinations,
        "voirdire_args": list(sc.voirdire_args),
        "machine": machine(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "runs": [],
    }
    ep = FakeEndpoint(sc.latency_ms, sc.followups)
    try:
        for n in counts:
            print(f"[bench.speed] voirdire, {n} sessions ...", file=sys.stderr, flush=True)
            claims = write_claims(workdir / f"claims-{n}.jsonl", n)
            run = replace(sc, sessions=n)
            tag = f"rss-{n}"
            ep.phase(tag)
            proc = measure(
                driver_argv("voirdire", run, ep.base_url, claims, workdir, tag), workdir, tag, args.timeout_s
            )
            traffic = ep.traffic(tag)
            result["runs"].append(
                {
                    "sessions": n,
                    "command": proc.command(),
                    "rc": proc.rc,
                    "error": proc.error_line() if proc.rc else None,
                    "verdicts": count_verdicts(workdir / f"voirdire-{tag}.jsonl"),
                    "wall_s": _round(proc.wall_s),
                    "cpu_s": _round(proc.cpu_s),
                    "requests": traffic.requests,
                    "peak_rss_mb": _round(proc.peak_rss_mb, 1),
                }
            )
            (workdir / f"voirdire-{tag}.jsonl").unlink(missing_ok=True)
    finally:
        ep.close()
        result["machine"]["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
        if not args.keep_workdir and not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    first = next((r["peak_rss_mb"] for r in result["runs"] if r["peak_rss_mb"]), None)
    for r in result["runs"]:
        r["rss_vs_first"] = _round(r["peak_rss_mb"] / first) if first else None
    return result


def sweep_table(result: dict[str, Any]) -> str:
    lines = [
        f"command: `{result['command']}`",
        "",
        f"voirdire alone, {result['concurrency']} in flight, latency {result['latency_ms']:g} ms. "
        f"Machine: {result['machine']['cpus']} CPUs, load {result['machine']['loadavg']} at start.",
        "",
        "| sessions | rc | verdicts | requests | wall s | CPU s | peak RSS MB | RSS / first |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in result["runs"]:
        cells = [r["sessions"], r["rc"], r["verdicts"], r["requests"], r["wall_s"], r["cpu_s"], r["peak_rss_mb"]]
        lines.append("| " + " | ".join(_fmt(c) for c in [*cells, r["rss_vs_first"]]) + " |")
    errors = [f"- {r['sessions']}: {r['error']}" for r in result["runs"] if r.get("error")]
    if errors:
        lines += ["", "errors:", *errors]
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m bench.speed",
        description=(__doc__ or "").split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--sessions", type=int, default=1000, help="claims examined (default 1000)")
    ap.add_argument("--latency-ms", type=float, default=None, help="endpoint latency (default 100; 5 for --rss-sweep)")
    ap.add_argument("--concurrency", type=int, default=200, help="sessions in flight (default 200)")
    ap.add_argument("--examinations", type=int, default=1, help="1: LMvLM; 3: LMvLM (Majority)")
    ap.add_argument("--followups", type=int, default=0, help="the examiner asks for follow-ups K times (default 0)")
    ap.add_argument("--sampling-temperature", type=float, default=None, help="Majority's follow-ups (0: greedy)")
    ap.add_argument("--answers", choices=("in_turn", "independent"), default=None, help="voirdire's --answers")
    ap.add_argument("--sequential-examinations", action="store_true", help="Majority's examinations one after another")
    ap.add_argument("--max-followups", type=int, default=5, help="follow-up rounds cap (default 5)")
    ap.add_argument(
        "--drivers",
        default=",".join(DEFAULT_DRIVERS),
        help=f"comma-separated, of {', '.join(DRIVERS)} (default {','.join(DEFAULT_DRIVERS)})",
    )
    ap.add_argument("--voirdire-args", default=None, help='extra voirdire options, e.g. "--workers 2"')
    ap.add_argument("--rss-sweep", default=None, help="e.g. 100,1000,10000: voirdire's peak RSS at each count")
    ap.add_argument("--no-startup", action="store_true", help="skip the one-session start-up runs")
    ap.add_argument("--timeout-s", type=float, default=3600.0, help="per driver run (default 3600)")
    ap.add_argument("--json-out", type=Path, default=None, help="the JSON (default: a temp folder)")
    ap.add_argument("--workdir", type=Path, default=None, help="keep data, transcripts and logs here")
    ap.add_argument("--keep-workdir", action="store_true", help="do not delete the temporary folder")
    return ap


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    script = sys.argv[0] if sys.argv and sys.argv[0].endswith("speed.py") else None
    prefix = ["python", os.path.relpath(script, REPO)] if script else ["python", "-m", "bench.speed"]
    command = shlex.join(prefix + argv)
    drivers = [d.strip() for d in args.drivers.split(",") if d.strip()]
    unknown = [d for d in drivers if d not in DRIVERS]
    if unknown:
        build_parser().error(f"--drivers: unknown {', '.join(unknown)} (use {', '.join(DRIVERS)})")
    latency = args.latency_ms if args.latency_ms is not None else (5.0 if args.rss_sweep else 100.0)
    sc = Scenario(
        sessions=args.sessions,
        latency_ms=latency,
        concurrency=args.concurrency,
        examinations=args.examinations,
        followups=args.followups,
        sampling_temperature=args.sampling_temperature,
        answers=args.answers,
        sequential_examinations=args.sequential_examinations,
        max_followups=args.max_followups,
        voirdire_args=parse_extra(args.voirdire_args),
    )
    if args.rss_sweep:
        counts = [int(c) for c in args.rss_sweep.split(",") if c.strip()]
        result = run_sweep(counts, sc, args, command)
        table = sweep_table(result)
    else:
        result = run_scenario(sc, drivers, args, command)
        table = scenario_table(result)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out = args.json_out or Path(tempfile.gettempdir()) / "voirdire-bench" / f"speed-{stamp}.json"  # not the checkout
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result | {"table": table}, indent=2) + "\n", encoding="utf-8")
    print(table)
    print(f"\nJSON: {out}")
