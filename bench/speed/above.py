"""CPU a model call costs above the HTTP transport, for this checkout and, interleaved, for others:

    python -m bench.speed.above [--rounds 5] [--sessions 1000] [--concurrency 200] [--client instant|sleep|http]
                                [--latency-ms 100] [--live-report] [--version NAME=DIR ...]

LMvLM (scenario b's protocol: one examination, the fake endpoint's replies) run in-process by ``run_protocol``
with a client that answers at once (``Instant``: the reply ``bench.speed.fake_server.reply_text`` gives, no HTTP, no
latency), so what is measured is everything a call does except the transport: the session, the agents and
autogen's messages, prompts, reply parsing, the transcript's records (built, serialised, masked, written).
Each round runs every version in a fresh process of its own (``--version NAME=DIR``: a ``git worktree`` of another
commit, its modules found first by ``bench.speed.checkout.CheckoutFinder``); a process runs 50 sessions to warm
up, then ``--sessions`` sessions twice, and reports the process time of each second run per model call. Prints,
per version, the median and range over the rounds and the minimum (the run least slowed by other work on a
shared machine). Against the end-to-end figures of ``bench.speed.percall`` this leaves out aiohttp, the event
loop's socket work and the CLI's live report.

``--client`` puts back one piece at a time, the rest of the measure the same (in-process, warm, no CLI):

========= ==========================================================================================================
instant   the client above: nothing but the call's own work (the default)
sleep     the same replies after ``--latency-ms`` (``asyncio.sleep``): ``--concurrency`` sessions waiting at once
          and woken by the event loop's timers, still no socket
http      voirdire's OpenAI-compatible client (aiohttp) on the fake endpoint of ``bench.speed.percall``
          (``harness.FakeEndpoint``, a process of its own, answering after ``--latency-ms``): the whole call
========= ==========================================================================================================

``--live-report`` attaches what the command line attaches to a run's transcript and this measure otherwise leaves
out: the end-of-run report folded from the records as they are written (``voirdire.reports.LiveReport``, observing
the file). Its own time inside the run (``perf_counter`` around each of its calls) is printed beside the total, in
microseconds a call; its total is the difference from a run without it.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import sys
from pathlib import Path

from bench.speed.harness import REPO, FakeEndpoint, checkout_versions, run_child

CLIENTS = ("instant", "sleep", "http")

CHILD = r"""
import asyncio, contextlib, json, resource, sys, tempfile, time, warnings
from pathlib import Path
sys.path.insert(0, {repo!r})
from bench.speed.checkout import CheckoutFinder
sys.meta_path.insert(0, CheckoutFinder(Path({code!r})))
from bench.speed.fake_server import reply_text
from autogen_core.models import RequestUsage
from voirdire.models.base import Completion, TextOnlyClient
from voirdire.models.openai import openai_compatible_client
from voirdire.protocols.cross_examination.protocol import CrossExamination
from voirdire.runner import run_protocol

class Instant(TextOnlyClient):
    async def _complete(self, messages, args):
        raise RuntimeError("complete() answers")
    async def complete(self, messages, args, n=1):
        text, _ = reply_text([{{"role": "user", "content": m.content}} for m in messages], 0)
        await asyncio.sleep({latency_s!r})
        return Completion(texts=[text], usage=RequestUsage(prompt_tokens=10, completion_tokens=5), finish_reason="stop")
    @property
    def model_info(self):
        return {{"vision": False, "function_calling": False, "json_output": False, "family": "unknown",
                 "structured_output": False}}

warnings.simplefilter("ignore")
items = [
    CrossExamination.Item(id=f"claim-{{i}}", claim=f"Claim number {{i}}: the capital of Country{{i}} is City{{i}}.")
    for i in range({sessions})
]

def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime

async def main():
    out = Path(tempfile.mkdtemp(prefix="voirdire-above-"))
    base_url = {base_url!r}
    client = openai_compatible_client("fake", base_url, spec_text="fake", api_key=None) if base_url else Instant()
    clients = {{"examiner": client, "examinee": client}}
    warm = out / "warm.jsonl"
    await run_protocol(CrossExamination(), items[:50], out=warm, clients=clients, concurrency={concurrency})
    per_call = []
    for k in range(2):
        path = out / f"run{{k}}.jsonl"
        observed = contextlib.nullcontext()
        folded = [0.0]
        if {live_report!r}:
            from voirdire.registry import registrations
            from voirdire.certificate import DEFAULT_LEVEL
            from voirdire.reports import DEFAULT_DECIDED_AT, LiveReport, load_prices
            from voirdire.transcript import observing
            live = LiveReport(
                registrations()["cross_examination"].fold, prices=load_prices(), ci=DEFAULT_LEVEL,
                decided_at=DEFAULT_DECIDED_AT,
            )  # as ``voirdire examine`` makes it

            def timed(record, live=live, clock=time.perf_counter, folded=folded):
                t = clock()
                live(record)
                folded[0] += clock() - t

            observed = observing(path, timed)
        start = cpu()
        with observed:
            await run_protocol(CrossExamination(), items, out=path, clients=clients, concurrency={concurrency})
        spent = cpu() - start
        calls = sum(1 for line in path.open("rb") if b'"kind":"model_call"' in line)
        per_call.append(1000 * spent / calls)
        if {live_report!r} and (live.missed or live.seen == 0):
            raise SystemExit("the live report missed records: it would be read back, not folded")
        for p in out.iterdir():
            p.unlink()
    await client.close()
    print(json.dumps({{"ms_per_call": per_call[-1], "first": per_call[0], "calls": calls,
                      "live_report_us_per_call": 1e6 * folded[0] / calls}}))

asyncio.run(main())
"""


def run_version(
    code: Path, sessions: int, concurrency: int, *, latency_s: float = 0.0, base_url: str | None = None,
    live_report: bool = False,
) -> dict[str, float]:
    """One fresh process of checkout ``code``: its ``Instant`` client waits ``latency_s`` a call, or, given a
    ``base_url``, voirdire's OpenAI-compatible client posts there instead; ``live_report``: the run's transcript
    observed by a ``LiveReport``, as the command line's is."""
    source = CHILD.format(
        repo=str(REPO), code=str(code), sessions=sessions, concurrency=concurrency, latency_s=latency_s,
        base_url=base_url, live_report=live_report,
    )  # fmt: skip
    return run_child(source, code)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.speed.above", description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--concurrency", type=int, default=200)
    ap.add_argument("--client", choices=CLIENTS, default="instant", help="what answers the calls (see above)")
    ap.add_argument("--latency-ms", type=float, default=100.0, help="the reply's latency for sleep and http")
    ap.add_argument("--live-report", action="store_true", help="fold the run's report as the command line does")
    ap.add_argument("--version", action="append", default=[], metavar="NAME=DIR", help="another checkout")
    args = ap.parse_args(argv)
    if args.latency_ms < 0:
        ap.error("--latency-ms: not below 0")
    versions = checkout_versions(ap, args.version, "this-checkout")
    command = shlex.join(["python", "-m", "bench.speed.above", *(sys.argv[1:] if argv is None else argv)])
    load_before = os.getloadavg()
    results: dict[str, list[float]] = {name: [] for name in versions}
    folding: dict[str, list[float]] = {name: [] for name in versions}
    latency_s = args.latency_ms / 1000 if args.client == "sleep" else 0.0  # http: the endpoint waits instead
    endpoint = FakeEndpoint(args.latency_ms, 0) if args.client == "http" else None
    try:
        for r in range(args.rounds):
            for name, code in versions.items():
                print(f"[above] round {r + 1}: {name}", file=sys.stderr, flush=True)
                done = run_version(
                    code, args.sessions, args.concurrency,
                    latency_s=latency_s, base_url=endpoint.base_url if endpoint else None,
                    live_report=args.live_report,
                )  # fmt: skip
                results[name].append(done["ms_per_call"])
                folding[name].append(done["live_report_us_per_call"])
    finally:
        if endpoint is not None:
            endpoint.close()
    load_after = os.getloadavg()
    what = {
        "instant": "no HTTP",
        "sleep": f"no HTTP, replies after {args.latency_ms:g} ms",
        "http": f"voirdire's client on the fake endpoint, {args.latency_ms:g} ms",
    }[args.client]
    print(
        f"command: `{command}` ({args.sessions} sessions, {args.concurrency} at a time, {what}; "
        f"{os.cpu_count()} CPUs; load {[round(x, 2) for x in load_before]} before, "
        f"{[round(x, 2) for x in load_after]} after)\n"
    )
    measured = "above the transport" if args.client != "http" else "in-process, with the transport"
    live = " (with the live report)" if args.live_report else ""
    extra = " | the live report's own µs a call, median (range)" if args.live_report else ""
    print(f"| version | CPU ms a call {measured}{live}, median (range) | minimum{extra} |")
    print("|---|---|---|" + ("---|" if args.live_report else ""))
    for name, values in results.items():
        own = folding[name]
        row = (
            f"| {name} ({versions[name]}) | {statistics.median(values):.3f} ({min(values):.3f}–{max(values):.3f}) "
            f"| {min(values):.3f} |"
        )
        if args.live_report:
            row += f" {statistics.median(own):.1f} ({min(own):.1f}–{max(own):.1f}) |"
        print(row)


if __name__ == "__main__":
    main()
