"""Process time of the per-call pieces the fifth CPU pass changed, for this checkout and, interleaved, for others:

    python -m bench.speed.pieces [--rounds 3] [--version NAME=DIR ...]

Each round runs every version in a fresh process of its own (``--version NAME=DIR``: a ``git worktree`` of another
commit, its modules found first by ``bench.speed.checkout.CheckoutFinder``); a process times each piece as the best
of 9 repetitions of a loop (process time, so a shared machine's other work slows it least). The pieces:

- ``agent``: a ``ModelAgent`` built (two a session; autogen's create_agent span, no tracer provider set);
- ``body``: ``openai._encode`` of a chat request of four messages and three arguments (one a call);
- ``record``: ``Session._write`` of one ``Message`` event to a writer that keeps nothing (about four a call).

Prints, per piece and version, the median over the rounds and the range, in microseconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

from bench.speed.harness import REPO, checkout_versions, run_child

CHILD = r"""
import json, sys, time
from pathlib import Path
sys.path.insert(0, {repo!r})
from bench.speed.checkout import CheckoutFinder
sys.meta_path.insert(0, CheckoutFinder(Path({code!r})))
from autogen_core.models import AssistantMessage, SystemMessage, UserMessage
from voirdire.agents import ModelAgent
from voirdire.models import RoleSettings
from voirdire.models.openai import OpenAIChatClient, _encode
from voirdire.session.protocol import Session
from voirdire.transcript.schema import Message

def best(fn, n):
    times = []
    for _ in range(9):
        start = time.process_time()
        for _ in range(n):
            fn()
        times.append((time.process_time() - start) / n)
    return 1e6 * min(times)

settings = RoleSettings(model="scripted:x")
conversation = [
    SystemMessage(content="You are an examiner. " * 20),
    UserMessage(content="Your goal is to verify the correctness of the following claim: " * 6, source="moderator"),
    AssistantMessage(content="1. In which country is Asmara?\n2. Is Asmara the seat of government?", source="examiner"),
    UserMessage(content="Do you have any follow-up questions? Please answer with Yes or No.", source="moderator"),
]
client = OpenAIChatClient("fake", base_url="http://127.0.0.1:1/v1", api_key="k")
body = client._request(conversation, {{"temperature": 0.7, "max_tokens": 256, "seed": 3}}, 1, False)

class Discard:
    def write(self, record):
        pass

session = Session.__new__(Session)
session.__dict__.update(run_id="20261127T100000Z-abcdef", session_id="claim-17", stage="questions", turn=1,
                        branch_name=None, _record=True, _writer=Discard(), _counter=[0])
text = "Claim number 17: the capital of Country17 is City17. " * 4
print(json.dumps({{
    "agent": best(lambda: ModelAgent("examiner", None, settings, model_label="x", timeout=30.0, max_retries=3), 5000),
    "body": best(lambda: _encode(body), 20000),
    "record": best(lambda: session._write(Message, sender="examiner", receiver="moderator", content=text,
                                          prompt="lmvlm/questions", quote=None), 20000),
}}))
"""


def run_version(code: Path) -> dict[str, float]:
    source = CHILD.format(repo=str(REPO), code=str(code))
    return run_child(source, code)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.speed.pieces", description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--version", action="append", default=[], metavar="NAME=DIR", help="another checkout")
    args = ap.parse_args(argv)
    versions = checkout_versions(ap, args.version, "this-checkout")
    load_before = os.getloadavg()
    results: dict[str, list[dict[str, float]]] = {name: [] for name in versions}
    for r in range(args.rounds):
        for name, code in versions.items():
            print(f"[pieces] round {r + 1}: {name}", file=sys.stderr, flush=True)
            results[name].append(run_version(code))
    load_after = os.getloadavg()
    print(
        f"{args.rounds} rounds; {os.cpu_count()} CPUs; load {[round(x, 2) for x in load_before]} before, "
        f"{[round(x, 2) for x in load_after]} after; us, best of 9 loops, median (range) over the rounds\n"
    )
    pieces = list(next(iter(results.values()))[0])
    print("| version | " + " | ".join(pieces) + " |")
    print("|---|" + "---|" * len(pieces))
    for name, rows in results.items():
        cells = []
        for piece in pieces:
            values = [row[piece] for row in rows]
            cells.append(f"{statistics.median(values):.2f} ({min(values):.2f}–{max(values):.2f})")
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
