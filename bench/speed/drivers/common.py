"""What every bare driver shares: its command line, the claims file, N sessions in flight, the result line.

A driver process prints one JSON line on stdout: ``{"verdicts", "accepted", "errors", "first_error"}``. With
``--sessions 0`` it imports its stack and builds its client, then exits: that run is its start-up cost.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from bench.speed.examination import Call, Params, examine_claim


def parser(description: str) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--base-url", required=True, help="the fake endpoint, e.g. http://127.0.0.1:PORT/v1")
    ap.add_argument("--claims", type=Path, required=True, help="JSONL with id and claim")
    ap.add_argument("--sessions", type=int, default=None, help="first N claims (0: start-up only)")
    ap.add_argument("--concurrency", type=int, default=1, help="sessions in flight")
    ap.add_argument("--examinations", type=int, default=1)
    ap.add_argument("--sampling-temperature", type=float, default=0.7)
    ap.add_argument("--max-followups", type=int, default=5)
    ap.add_argument("--answers", choices=("in_turn", "independent"), default="in_turn")
    ap.add_argument("--sequential-examinations", action="store_true")
    return ap


def params(args: argparse.Namespace) -> Params:
    return Params(
        examinations=args.examinations,
        sampling_temperature=args.sampling_temperature,
        max_followup_rounds=args.max_followups,
        concurrent_examinations=not args.sequential_examinations,
        answers=args.answers,
    )


def read_claims(path: Path, limit: int | None) -> list[tuple[str, str]]:
    out = []
    with path.open(encoding="utf-8") as f:
        for i, line in enumerate(f):
            if limit is not None and i >= limit:
                break
            record = json.loads(line)
            out.append((str(record["id"]), str(record["claim"])))
    return out


@dataclass
class Tally:
    verdicts: int = 0
    accepted: int = 0
    errors: int = 0
    first_error: str | None = None


async def run_sessions(call: Call, claims: list[tuple[str, str]], concurrency: int, p: Params) -> Tally:
    """``concurrency`` workers take the next claim as they finish one: at most that many sessions in flight, the
    same as a semaphore of N, with one coroutine per slot rather than one task per claim."""
    todo: Iterator[tuple[str, str]] = iter(claims)
    tally = Tally()

    async def worker() -> None:
        for sid, claim in todo:
            try:
                accepted = await examine_claim(call, claim, sid, p)
            except Exception as exc:
                tally.errors += 1
                tally.first_error = tally.first_error or f"{sid}: {type(exc).__name__}: {exc}"
                continue
            tally.verdicts += 1
            tally.accepted += int(accepted)

    await asyncio.gather(*(worker() for _ in range(max(1, min(concurrency, len(claims))))))
    return tally


def main(
    description: str,
    make_call: Callable[[argparse.Namespace], tuple[Call, Callable[[], Awaitable[None]]]],
    argv: list[str] | None = None,
    add_options: Callable[[argparse.ArgumentParser], None] | None = None,
) -> None:
    """Parse the driver's options, build its call (inside the loop, as SDK clients want) and run the sessions."""
    ap = parser(description)
    if add_options is not None:
        add_options(ap)
    args = ap.parse_args(argv)
    claims = read_claims(args.claims, args.sessions)

    async def go() -> Tally:
        call, close = make_call(args)
        try:
            return await run_sessions(call, claims, args.concurrency, params(args)) if claims else Tally()
        finally:
            await close()

    tally = asyncio.run(go())
    print(json.dumps(asdict(tally)), flush=True)
    sys.exit(1 if tally.errors else 0)
