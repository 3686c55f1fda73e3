"""Fig. 5's question for this implementation: how DCR's wall time falls with concurrency.

    python bench/dcr_concurrency.py [--items 100] [--latency 0.2] [--rounds 1] [--out docs/results/dcr_concurrency.json]

The first ``--items`` SummEval summaries run through ``voirdire.runner.run_protocol`` against a fake
OpenAI-compatible endpoint on 127.0.0.1 that answers every request after a fixed ``--latency`` (the lexical
stand-in of tests/protocols/dcr/fake_dcr.py: about a third of the summaries need one RAI round), at concurrency
1, 2, 4, 8, 16. Beside each wall time, the critical-path bound: a session's calls are sequential (DCE → AMC → RAI →
DCE → AMC), so with c sessions at a time no schedule beats latency × max(longest session's calls, ⌈all calls / c⌉).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.fake_openai when run as a script

from tests.fake_openai import FakeOpenAIServer
from tests.protocols.dcr.fake_dcr import respond
from voirdire.models import RoleSettings
from voirdire.protocols.dcr import DCR, DCRParams
from voirdire.protocols.dcr.data import load_benchmark
from voirdire.runner import run_protocol
from voirdire.transcript import ModelCall, load


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=100)
    ap.add_argument("--latency", type=float, default=0.2, help="seconds the endpoint takes per request")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--concurrency", default="1,2,4,8,16")
    ap.add_argument("--out", type=Path, default=Path("docs/results/dcr_concurrency.json"))
    args = ap.parse_args()
    items = [e.item for e in load_benchmark("summeval")[: args.items]]

    def slow(messages: list[dict[str, object]]) -> str:
        time.sleep(args.latency)
        return respond(messages)  # type: ignore[arg-type]

    rows = []
    with FakeOpenAIServer(slow) as server, tempfile.TemporaryDirectory() as tmp:
        spec = f"openai-compatible:fake@{server.url}"
        roles = {r: RoleSettings(model=spec, max_tokens=1024, temperature=0.0) for r in DCR.roles}
        for c in (int(x) for x in args.concurrency.split(",")):
            out = Path(tmp) / f"c{c}.jsonl"
            t0 = time.perf_counter()
            result = asyncio.run(
                run_protocol(DCR(DCRParams(rounds=args.rounds)), items, out=out, roles=roles, concurrency=c)
            )
            wall = time.perf_counter() - t0
            calls = [sum(isinstance(e, ModelCall) for e in s.events) for s in load(out).sessions.values()]
            bound = args.latency * max(max(calls), math.ceil(sum(calls) / c))
            row = {
                "concurrency": c,
                "wall_s": round(wall, 2),
                "critical_path_bound_s": round(bound, 2),
                "wall_over_bound": round(wall / bound, 2),
                "calls": sum(calls),
                "longest_session_calls": max(calls),
                "errors": result.errors,
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        "command": "python bench/dcr_concurrency.py "
        f"--items {args.items} --latency {args.latency} --rounds {args.rounds}",
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs (shared), Python {platform.python_version()}",
        "items": args.items,
        "latency_s": args.latency,
        "rounds": args.rounds,
    }
    args.out.write_text(json.dumps({**meta, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
