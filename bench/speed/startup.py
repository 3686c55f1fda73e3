"""Start-up against the import floor: `voirdire --help` (and `voirdire list`) beside `python -c "import openai,
pydantic"`, the same interpreter, interleaved, each in a process of its own (``harness.measure``: wall from just
before the start to the exit, the process's own CPU and peak RSS).

    python -m bench.speed.startup [--reps 5] [--json-out FILE] [--before DIR]

``--before DIR`` adds `voirdire --help` of another version of the code, interleaved with the rest: DIR holds a
``voirdire`` package (an older commit's ``voirdire/`` with its ``protocols``, ``agents`` and ``prompts`` folders
linked in as ``voirdire/protocols``, ``voirdire/agents`` and ``voirdire/prompt_files``), put first on PYTHONPATH.

Prints a markdown table: median and range of each command's wall and CPU, and the ratio of the medians to the
floor's; the load average before and after (the machine may be shared: read the ratios, not the seconds).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.speed.harness import measure

COMMANDS: dict[str, list[str]] = {
    "floor: python -c 'import openai, pydantic'": [sys.executable, "-c", "import openai, pydantic"],
    "voirdire --help": [sys.executable, "-m", "voirdire", "--help"],
    "voirdire list": [sys.executable, "-m", "voirdire", "list"],
}
FLOOR = next(iter(COMMANDS))


def spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def run(reps: int, before: Path | None = None) -> dict[str, Any]:
    if before is not None:
        COMMANDS[f"voirdire --help, before ({before})"] = [
            "env", f"PYTHONPATH={before}", sys.executable, "-m", "voirdire", "--help"
        ]
    load_before = os.getloadavg()
    walls: dict[str, list[float]] = {name: [] for name in COMMANDS}
    cpus: dict[str, list[float]] = {name: [] for name in COMMANDS}
    rss: dict[str, list[float]] = {name: [] for name in COMMANDS}
    with tempfile.TemporaryDirectory(prefix="voirdire-startup-") as tmp:
        for _ in range(reps):  # interleaved: each repetition runs every command once, in the same order
            for i, (name, argv) in enumerate(COMMANDS.items()):
                proc = measure(argv, Path(tmp), f"cmd{i}", 120)
                if proc.rc != 0:
                    raise SystemExit(f"{name}: exit {proc.rc}: {proc.error_line()}")
                walls[name].append(proc.wall_s)
                cpus[name].append(proc.cpu_s)
                rss[name].append(proc.peak_rss_mb)
    floor_wall, floor_cpu = statistics.median(walls[FLOOR]), statistics.median(cpus[FLOOR])
    rows = [
        {
            "command": name,
            "wall_s": spread(walls[name]),
            "cpu_s": spread(cpus[name]),
            "peak_rss_mb": statistics.median(rss[name]),
            "wall_ratio": statistics.median(walls[name]) / floor_wall,
            "cpu_ratio": statistics.median(cpus[name]) / floor_cpu,
        }
        for name in COMMANDS
    ]
    return {
        "reps": reps,
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        "rows": rows,
    }


def table(result: dict[str, Any]) -> str:
    def rng(s: dict[str, float]) -> str:
        return f"{s['median']:.3f} ({s['min']:.3f}–{s['max']:.3f})"

    lines = [
        f"{result['reps']} interleaved repetitions, Python {result['python']}, {result['cpus']} CPUs, "
        f"load {result['loadavg_before']} before, {result['loadavg_after']} after.",
        "",
        "| command | wall s, median (range) | CPU s, median (range) | peak RSS MB | wall / floor | CPU / floor |",
        "|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['command']} | {rng(r['wall_s'])} | {rng(r['cpu_s'])} | {r['peak_rss_mb']:.0f} | "
            f"{r['wall_ratio']:.2f} | {r['cpu_ratio']:.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.speed.startup", description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5, help="interleaved repetitions (at least 3)")
    parser.add_argument("--json-out", type=Path, help="also write the result as JSON here")
    parser.add_argument("--before", type=Path, metavar="DIR", help="also time an older version's voirdire --help")
    args = parser.parse_args(argv)
    if args.reps < 3:
        parser.error("--reps: at least 3")
    result = run(args.reps, args.before)
    print(table(result))
    if args.json_out:
        args.json_out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
