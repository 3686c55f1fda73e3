"""The examination as an Inspect AI task: one sample per claim, a solver that plays both roles through Inspect's
model API, run by ``inspect_ai.eval`` as an Inspect user would.

The model is ``openai-api/fake/fake``: Inspect's OpenAI-compatible provider (chat completions, not the Responses
API), which takes its base URL from ``model_base_url`` (else ``FAKE_BASE_URL``) and its key from ``FAKE_API_KEY``.
Nothing leaves 127.0.0.1: the display is off (``display="none"``), there is no telemetry hook unless
``INSPECT_TELEMETRY`` names one (the harness clears it), and the log goes to ``--log-dir``. ``max_samples`` is the
sessions in flight; ``max_connections`` is set so that it never limits them (a session may have several requests
out at once).

    python -m bench.speed.drivers.inspect_eval --base-url http://127.0.0.1:PORT/v1 --claims claims.jsonl \\
        --concurrency 200 --log-dir /tmp/inspect-logs
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from bench.speed.drivers.common import Tally, params, parser, read_claims
from bench.speed.examination import MAX_TOKENS, Message, Params, examine_claim

MODEL = "openai-api/fake/fake"


def build_task(claims: list[tuple[str, str]], p: Params) -> Any:
    from inspect_ai import Task
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import (
        ChatMessage,
        ChatMessageAssistant,
        ChatMessageSystem,
        ChatMessageUser,
        GenerateConfig,
        get_model,
    )
    from inspect_ai.solver import Generate, TaskState, solver

    def convert(m: Message) -> ChatMessage:
        if m["role"] == "system":
            return ChatMessageSystem(content=m["content"])
        if m["role"] == "assistant":
            return ChatMessageAssistant(content=m["content"])
        return ChatMessageUser(content=m["content"])

    @solver
    def cross_examine() -> Any:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            model = get_model()

            async def call(messages: list[Message], temperature: float, seed: int | None) -> str:
                config = GenerateConfig(temperature=temperature, max_tokens=MAX_TOKENS, seed=seed)
                output = await model.generate([convert(m) for m in messages], config=config)
                return output.completion

            accepted = await examine_claim(call, state.input_text, str(state.sample_id), p)
            state.output.completion = "correct" if accepted else "incorrect"
            state.completed = True
            return state

        return solve

    dataset = MemoryDataset([Sample(id=sid, input=claim) for sid, claim in claims])
    return Task(dataset=dataset, solver=cross_examine(), name="cross_examination")


def main(argv: list[str] | None = None) -> None:
    ap = parser("the examination as an Inspect AI task")
    ap.add_argument("--log-dir", required=True)
    ap.add_argument("--max-connections", type=int, default=None, help="default: concurrency × 8")
    args: argparse.Namespace = ap.parse_args(argv)
    os.environ.pop("INSPECT_TELEMETRY", None)
    os.environ.setdefault("FAKE_API_KEY", "not-needed")
    os.environ["INSPECT_DISPLAY"] = "none"
    import inspect_ai

    claims = read_claims(args.claims, args.sessions)
    if not claims:  # start-up: Inspect imported, the model resolved
        from inspect_ai.model import get_model

        get_model(MODEL, base_url=args.base_url)
        print(json.dumps(Tally().__dict__), flush=True)
        return
    logs = inspect_ai.eval(
        build_task(claims, params(args)),
        model=MODEL,
        model_base_url=args.base_url,
        display="none",
        log_dir=args.log_dir,
        max_samples=args.concurrency,
        max_connections=args.max_connections or args.concurrency * 8,
        max_retries=0,
        fail_on_error=False,
    )
    tally = Tally()
    for log in logs:
        for sample in log.samples or []:
            if sample.error is not None:
                tally.errors += 1
                tally.first_error = tally.first_error or f"{sample.id}: {sample.error.message}"
            else:
                tally.verdicts += 1
                tally.accepted += int(sample.output.completion == "correct")
        if log.status != "success" and log.error is not None:
            tally.first_error = tally.first_error or f"eval {log.status}: {log.error.message}"
    print(json.dumps(tally.__dict__), flush=True)
    sys.exit(1 if tally.errors or tally.verdicts < len(claims) else 0)


if __name__ == "__main__":
    main()
