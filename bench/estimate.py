"""CPU time of ``--estimate``, for docs/certificate.md ("Cost before the run").

The tests assert what ``--estimate`` prints and that it sends nothing; its time is measured here. Each line is one
JSON object: the imports ``estimate_run`` needs, then ``estimate_run`` over N LMvLM (Majority) items with the
question cap, and the whole command (``voirdire examine ... --estimate``, in a child process) beside the same
command's ``--help`` (what importing the command line costs by itself).

    python -m bench.estimate --items 1000 10000
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def child_cpu(argv: list[str]) -> float:
    """CPU seconds (user + system) of one child process running ``argv``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def in_process(sizes: list[int]) -> None:
    start = time.process_time()
    from voirdire.certificate import estimate_run
    from voirdire.models import RoleSettings
    from voirdire.registry import registrations
    from voirdire.reports import load_prices

    print(json.dumps({"what": "imports", "cpu_s": round(time.process_time() - start, 3)}))
    reg = registrations()["cross_examination"]
    protocol = reg.protocol(reg.protocol.Params(examinations=3, max_questions=3))
    roles = {"*": RoleSettings(model="openai:gpt-4o-mini")}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            items = [
                reg.protocol.item_from_record({"id": str(i), "question": f"Who wrote book {i}?"}) for i in range(n)
            ]
            start = time.process_time()
            found = estimate_run(reg.budget, protocol, items, roles, load_prices(), out=Path(tmp) / "t.jsonl")
            cpu = time.process_time() - start
            print(json.dumps({"what": "estimate_run", "items": n, "cpu_s": round(cpu, 3), "requests": found.requests}))


def command(items: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "items.jsonl"
        data.write_text("\n".join(json.dumps({"id": str(i), "question": f"Who wrote book {i}?"}) for i in range(items)))
        base = [sys.executable, "-m", "voirdire", "examine"]
        run = [*base, "--questions", str(data), "--model", "openai:gpt-4o-mini", "--out", f"{tmp}/t.jsonl"]
        print(json.dumps({"what": "examine --help", "cpu_s": round(child_cpu([*base, "--help"]), 3)}))
        print(
            json.dumps(
                {"what": "examine --estimate", "items": items, "cpu_s": round(child_cpu([*run, "--estimate"]), 3)}
            )
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, nargs="+", default=[1000, 10000])
    args = ap.parse_args()
    in_process(args.items)
    command(args.items[0])


if __name__ == "__main__":
    main()
