"""Smoke run: the LLM evaluator of §8 (App. D.2 prompts) on 20 IP datapoints with a real model.

    python bench/no_data_llm_smoke.py [--model local] [--n 20] [--strategy pick|generate] [--max-tokens 192]

Until the Session wiring lands this talks to the model client directly (``voirdire.models.build_client``) and
renders the prompt files with ``voirdire.prompts``; rounds are recorded through ``on_event`` and counted. With
the embedded SmolLM2-135M the point is that the loop completes and parses (or falls back, App. D.2), not the
accuracy. Labels are cached per datapoint (``relabel_each_round=False``) to keep the run short on 2 cores.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections import Counter
from typing import Any

from autogen_core.models import SystemMessage, UserMessage

from voirdire.metrics import accuracy
from voirdire.models import build_client, parse_spec
from voirdire.prompts import PromptLibrary
from voirdire.protocols.no_data.algorithm import EVENT_DECISION, EVENT_ROUND, NoDataParams, no_data_algorithm
from voirdire.protocols.no_data.challenges import RuleVerifier
from voirdire.protocols.no_data.data import load_split
from voirdire.protocols.no_data.llm import EVENT_PARSE_FAILURE, LLMEvaluator


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    client = build_client(parse_spec(args.model))
    library = PromptLibrary()
    calls = Counter[str]()

    async def ask(role: str, prompt: str, variables: dict[str, str]) -> str:
        rendered = library.get(f"no_data/{prompt}").render(**variables)
        messages = [
            SystemMessage(content=m.content) if m.role == "system" else UserMessage(content=m.content, source="user")
            for m in rendered
        ]
        calls[prompt] += 1
        result = await client.create(messages, extra_create_args={"max_tokens": args.max_tokens, "temperature": 0.0})
        return str(result.content)

    events = Counter[str]()

    def on_event(kind: str, data: dict[str, Any]) -> None:
        events[kind] += 1

    train, test = load_split("ip", "train"), load_split("ip", "test")
    evaluator = LLMEvaluator(
        ask,
        exemplars=[(r.x, r.y) for r in train.rows[: args.exemplars]],
        pool=train.xs,
        strategy=args.strategy,
        relabel_each_round=False,
        on_event=on_event,
    )
    rows = test.rows[: args.n]
    start = time.time()
    run = await no_data_algorithm(
        [r.x for r in rows], evaluator, RuleVerifier(test.rubric), NoDataParams(rounds=3, phi=0.6), on_event=on_event
    )
    await client.close()
    return {
        "model": args.model,
        "n": len(rows),
        "strategy": args.strategy,
        "seconds": round(time.time() - start, 1),
        "calls": dict(calls),
        "round_events": events[EVENT_ROUND],
        "decision_events": events[EVENT_DECISION],
        "parse_failures": events[EVENT_PARSE_FAILURE],
        "success_rate": run.success_rate,
        "flip_rate": run.flip_rate,
        "accuracy": accuracy([r.y for r in rows], run.predictions),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="local")
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--strategy", choices=["pick", "generate"], default="pick")
    ap.add_argument("--exemplars", type=int, default=5)
    ap.add_argument("--max-tokens", type=int, default=192)
    args = ap.parse_args(argv)
    print(json.dumps(asyncio.run(main_async(args)), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
