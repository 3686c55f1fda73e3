"""The acceptance run of the entailment evaluator: the first N EVOUNA items through ``voirdire qa-eval``.

    python bench/qa_entailment_evouna.py                      # embedded SmolLM2-135M (slow: ~minutes on 2 cores)
    python bench/qa_entailment_evouna.py --fake-openai        # a rule-based fake OpenAI-compatible server
    python bench/qa_entailment_evouna.py --model evaluator=openai-compatible:qwen2.5@http://127.0.0.1:8000/v1

Runs ``voirdire qa-eval --data NQ.json --evaluator entailment --limit N --partial-marks --max-tokens 96`` (fresh
transcript under transcripts/), times it, and writes the CLI's JSON report plus what the evaluator model did
(entailment labels, unparseable replies by step, a few raw replies) to docs/results/qa_entailment_<tag>.json.
``--fake-openai`` starts ``tests/fake_openai.FakeOpenAIServer`` on 127.0.0.1 with the rule-based stand-in of
``tests/protocols/qa_entailment/helpers.py``, to show the same run going over HTTP; its numbers measure that stand-in
(lexical containment both ways), not a language model.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for tests.fake_openai when run as a script

from voirdire.cli import main  # noqa: E402
from voirdire.transcript import Message, ModelCall, ParseFailure, Step, load  # noqa: E402


def analyse(transcript: Path) -> dict:
    t = load(transcript)
    labels: Counter[str] = Counter()
    calls: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    finish: Counter[str] = Counter()
    examples: dict[str, list[str]] = {}
    tokens = []
    for s in t.sessions.values():
        for e in s.of_kind(Step):
            if e.name == "entailment":
                labels[str(e.data["outcome"]["label"])] += 1
        for f in s.of_kind(ParseFailure):
            step = (f.prompt or "").rsplit("/", 1)[-1]
            failures[step] += 1
            if len(examples.setdefault(step, [])) < 3:
                examples[step].append(f.raw[:200])
        for c in s.of_kind(ModelCall):
            finish[str(c.finish_reason)] += 1
            tokens.append(c.usage.completion_tokens)
        for m in s.of_kind(Message):
            if m.sender == "evaluator" and m.prompt:
                calls[m.prompt.rsplit("/", 1)[-1]] += 1
    replies = {
        "qa2d": [
            m.content[:160]
            for s in list(t.sessions.values())[:3]
            for m in s.of_kind(Message)
            if m.sender == "evaluator" and m.prompt == "qa_entailment/qa2d"
        ]
    }
    return {
        "model_calls_by_prompt": dict(calls),
        "entailment_labels": dict(labels),
        "parse_failures_by_prompt": dict(failures),
        "unparseable_examples": examples,
        "reply_examples": replies,
        "finish_reasons": dict(finish),
        "completion_tokens_mean": sum(tokens) / len(tokens) if tokens else None,
    }


def run(argv: list[str]) -> tuple[int, dict, float]:
    start = time.perf_counter()
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(argv)
    wall = time.perf_counter() - start
    return code, json.loads(buffer.getvalue()) if code == 0 else {}, wall


def main_bench() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "evouna" / "NQ.json")
    ap.add_argument("--limit", type=int, default=20)
    ap.add_argument("--max-tokens", type=int, default=96)
    ap.add_argument("--model", action="append", default=[], help="ROLE=SPEC, passed on to qa-eval")
    ap.add_argument("--fake-openai", action="store_true", help="serve the evaluator from a fake server on 127.0.0.1")
    ap.add_argument("--tag", help="results file tag (default: embedded / fake_openai)")
    args = ap.parse_args()

    tag = args.tag or ("fake_openai" if args.fake_openai else "embedded")
    out = ROOT / "transcripts" / f"qa_entailment-evouna{args.limit}-{tag}.jsonl"
    argv = [
        "qa-eval",
        *["--data", str(args.data), "--evaluator", "entailment", "--limit", str(args.limit), "--partial-marks"],
        *["--max-tokens", str(args.max_tokens), "--out", str(out), "--fresh", "--json", "--no-progress"],
    ]
    for spec in args.model:
        argv += ["--model", spec]
    server = None
    if args.fake_openai:
        from tests.fake_openai import FakeOpenAIServer
        from tests.protocols.qa_entailment.helpers import rule_based_evaluator

        server = FakeOpenAIServer(rule_based_evaluator).__enter__()
        argv += ["--model", f"evaluator=openai-compatible:fake-evaluator@{server.url}"]
    try:
        code, report, wall = run(argv)
    finally:
        if server is not None:
            server.__exit__(None, None, None)
    if code != 0:
        print(f"qa-eval exited with {code}", file=sys.stderr)
        return code
    result = {
        "command": "voirdire " + " ".join(a if "://" not in a else a.split("@")[0] + "@<fake server>" for a in argv),
        "wall_s": round(wall, 1),
        "analysis": analyse(out),
        "report": report,
    }
    path = ROOT / "docs" / "results" / f"qa_entailment_evouna{args.limit}_{tag}.json"
    path.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    overall = report["overall"]
    s = overall["scores"]
    print(
        f"{tag}: {report['n_graded']}/{report['n_items']} graded in {wall:.1f}s; F1 {100 * s['f1']:.1f}, "
        f"acc {100 * s['accuracy']:.1f}; undetermined {overall['n_undetermined']}; hierarchy {overall['hierarchy']}; "
        f"replies {report['replies']}"
    )
    print(f"wrote {path.relative_to(ROOT)}; transcript {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main_bench())
