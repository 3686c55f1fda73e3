"""Benchmark: the model bill of each setting, side by side, against a fake endpoint that caches and bills as the
providers do.

    python bench/cost.py [--claims 200] [--agree 0.8] [--seed 7] [--json FILE]

The endpoint (127.0.0.1, one thread per request) speaks OpenAI's chat completions and Anthropic's Messages API. It
counts four characters a token. OpenAI's rule: a prompt whose first 1,024 tokens or more match an earlier prompt's
has the longest such prefix cached, in steps of 128 tokens, read at the cached-input rate. Anthropic's rule: a
prefix marked with ``cache_control`` and at least 1,024 tokens long is cached; a later request reads the longest
cached prefix of its own marked prefix and writes the rest of it; what follows the breakpoint is uncached input.
The endpoint keeps its own bill of every request at the prices below, which the report's cost must equal.

Its examiner samples: a follow-up question carries the request's seed, and the decision of an examination is a
function of that question, so examination k of a claim is the same examination in every run. The share of claims
whose first two examinations agree is ``--agree`` (each examination finds a claim incorrect with the probability
q for which q² + (1 − q)² is that share). Anthropic's API takes no seed, so its examinations do not differ.

Settings, each on the same claims (PopQA's, ../shared/data/popqa, as "SUBJ's PROP is OBJ.") and seeds:

- LMvLM (Majority) full and ``--adaptive``, OpenAI rule: requests, tokens and billed cost per verdict; the adaptive
  verdicts must equal the full ones on every claim.
- The claims as they are, Anthropic rule: LMvLM's prompts are short, below the providers' minimum.
- Each claim with a reference of ``--reference`` tokens, repeated in every prompt as DCR repeats its reference:
  OpenAI rule, Anthropic rule, Anthropic with ``--no-prompt-cache``. What caching saves is the bill against the
  same calls uncached (the report's ``uncached_cost_usd``).
- ``--repeats 5 --decided-at 0.8`` full and ``--stop-when-decided``, 70 % of the items steady: calls, and the
  decided/undecided status of every item.
- ``--max-cost`` at 20 % of the full run's ``--estimate``: where it stops, and the verdicts after resuming.

Every setting's report cost is compared with the endpoint's bill, to the cent.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import math
import re
import shutil
import socket
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
POPQA = ROOT.parent / "shared" / "data" / "popqa" / "popqa_longtail_merged.jsonl"
MODEL_OPENAI, MODEL_ANTHROPIC = "bench-gpt", "bench-claude"
# USD per million tokens (uncached input, cached read, cache write, output), as the price file given to the runs.
PRICES = {MODEL_OPENAI: (2.50, 1.25, 2.50, 10.00), MODEL_ANTHROPIC: (3.00, 0.30, 3.75, 15.00)}
CHARS = 4
OPENAI_MIN, OPENAI_STEP, ANTHROPIC_MIN = 1024, 128, 1024


def _h(*parts: object) -> float:
    """A number in [0, 1) from the parts: the seeded draws of the fake."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


@dataclass
class Bill:
    requests: int = 0
    input: int = 0  # uncached prompt tokens
    cached: int = 0  # read from the cache
    written: int = 0  # written to it (Anthropic)
    output: int = 0
    usd: float = 0.0

    def add(self, model: str, uncached: int, read: int, write: int, out: int) -> None:
        p = PRICES[model]
        self.requests += 1
        self.input, self.cached, self.written, self.output = (
            self.input + uncached, self.cached + read, self.written + write, self.output + out,
        )  # fmt: skip
        self.usd += (uncached * p[0] + read * p[1] + write * p[2] + out * p[3]) / 1e6


@dataclass
class Fake:
    """The endpoint's replies and its caches and bill (reset between settings)."""

    seed: int
    q: float  # the chance an examination finds a claim incorrect
    stable: float = 0.7  # the share of items whose every repeat gives one verdict
    bill: Bill = field(default_factory=Bill)
    openai_seen: set[str] = field(default_factory=set)
    anthropic_seen: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reset(self) -> None:
        with self.lock:
            self.bill, self.openai_seen, self.anthropic_seen = Bill(), set(), set()

    # ------------------------------------------------------------------ replies
    def reply(self, messages: list[dict[str, Any]], seed: Any) -> str:
        last = messages[-1]["content"]
        whole = "\n".join(m["content"] for m in messages)
        claim = re.search(r"claim[^:]*:\s*(.+?)(?:\n|$)", whole)
        key = claim.group(1) if claim else whole[:200]
        if re.search(r"verify the correctness|Imagine trying to prove", last):
            return "1. What is the source of this?\n2. When was it established?"
        if "Do you have any follow-up questions" in last:
            return "No" if "Is the code" in whole else "Yes"
        if "What are the follow-up questions" in last:
            return f"1. Is the code {int(seed or 0) % 1000}?"
        if re.search(r"correct or incorrect\?", last):
            code = re.findall(r"Is the code (\d+)", whole)
            draw = code[-1] if code else seed
            if _h(self.seed, key, "stable") < self.stable:  # a steady item: every repeat agrees
                draw = "steady"
            wrong = _h(self.seed, key, draw) < self.q
            return "The claim is incorrect." if wrong else "The claim is correct."
        if "phrase your answer as a claim" in last:
            return key
        return "It is as the reference says: " + _reference(key, 60)

    # ------------------------------------------------------------------ the caching rules
    def openai(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body.get("messages", [])
        prompt = "".join(f"<{m['role']}>{m['content']}" for m in messages)
        tokens = len(prompt) // CHARS
        with self.lock:
            cached = 0
            if tokens >= OPENAI_MIN:
                steps = range(OPENAI_MIN, tokens + 1, OPENAI_STEP)
                for size in steps:
                    if _digest(prompt[: size * CHARS]) in self.openai_seen:
                        cached = size
                for size in steps:
                    self.openai_seen.add(_digest(prompt[: size * CHARS]))
            text = self.reply(messages, body.get("seed"))
            out = max(1, len(text) // CHARS)
            self.bill.add(MODEL_OPENAI, tokens - cached, cached, 0, out)
        return {
            "id": "bench", "object": "chat.completion", "model": body.get("model"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": tokens, "completion_tokens": out, "total_tokens": tokens + out,
                      "prompt_tokens_details": {"cached_tokens": cached}},
        }  # fmt: skip

    def anthropic(self, body: dict[str, Any]) -> dict[str, Any]:
        blocks = ([{"role": "system", "content": body["system"]}] if "system" in body else []) + body["messages"]
        prompt, marked, plain = "", None, []
        for turn in blocks:
            parts = turn["content"] if isinstance(turn["content"], list) else [{"text": turn["content"]}]
            for part in parts:
                prompt += part["text"]
                if "cache_control" in part:
                    marked = prompt
            plain.append({"role": turn["role"], "content": "".join(p["text"] for p in parts)})
        tokens = len(prompt) // CHARS
        with self.lock:
            read = write = 0
            if marked is not None and len(marked) // CHARS >= ANTHROPIC_MIN:
                hit = max((p for p in self.anthropic_seen if marked.startswith(p)), key=len, default="")
                read, write = len(hit) // CHARS, len(marked) // CHARS - len(hit) // CHARS
                self.anthropic_seen.add(marked)
            text = self.reply(plain, None)
            out = max(1, len(text) // CHARS)
            self.bill.add(MODEL_ANTHROPIC, tokens - read - write, read, write, out)
        return {
            "id": "msg_bench", "type": "message", "role": "assistant", "model": body.get("model"),
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
            "usage": {"input_tokens": tokens - read - write, "cache_read_input_tokens": read,
                      "cache_creation_input_tokens": write, "output_tokens": out},
        }  # fmt: skip


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


_WORDS = ("archive", "record", "register", "source", "account", "ledger", "chronicle", "annal", "survey", "census")


def _reference(key: str, tokens: int) -> str:
    """A paragraph of about ``tokens`` tokens that depends on the claim alone."""
    words, i = [], 0
    while sum(len(w) + 1 for w in words) < tokens * CHARS:
        words.append(_WORDS[int(_h(key, i) * len(_WORDS))])
        i += 1
    return " ".join(words) + "."


@contextlib.contextmanager
def serving(fake: Fake) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()  # no Nagle: a reply in several writes would wait out the client's delayed ACK
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, *args: Any) -> None:
            return None

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            answer = fake.anthropic(body) if self.path.endswith("/messages") else fake.openai(body)
            data = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


# ---------------------------------------------------------------------- the runs
def claims(path: Path, n: int, reference: int) -> Path:
    rows = []
    with POPQA.open(encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            claim = f"{r['subj']}'s {r['prop']} is {r['obj']}."
            if reference:
                claim += " Reference: " + _reference(claim, reference)
            rows.append({"id": str(r["id"]), "question": r["question"], "claim": claim,
                         "answers": r["possible_answers"]})  # fmt: skip
            if len(rows) == n:
                break
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def run(argv: list[str]) -> tuple[int, str]:
    from voirdire.cli import main

    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc, err.getvalue()


def report(out: Path, prices: Path) -> dict[str, Any]:
    from voirdire.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        main(["report", str(out), "--json", "--prices", str(prices), "--ci", "0"])
    return json.loads(buf.getvalue())


def run_out(argv: list[str]) -> str:
    from voirdire.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        main(argv)
    return buf.getvalue()


def session_costs(out: Path) -> dict[str, float]:
    """Each session's bill, at the bench's prices."""
    from voirdire.transcript import ModelCall, load

    found = {}
    for sid, s in load(out).sessions.items():
        usd = 0.0
        for c in s.of_kind(ModelCall):
            p, u = PRICES[MODEL_OPENAI if "gpt" in c.model else MODEL_ANTHROPIC], c.usage
            uncached = u.prompt_tokens - u.cache_read_tokens - u.cache_write_tokens
            usd += (uncached * p[0] + u.cache_read_tokens * p[1] + u.cache_write_tokens * p[2]
                    + u.completion_tokens * p[3]) / 1e6  # fmt: skip
        found[sid] = usd
    return found


def _agreeing(out: Path) -> float:
    """The share of claims whose first two examinations agree."""
    from voirdire.transcript import load

    both = [
        [e["decision"] for e in s.verdict.statistics["examinations"][:2]]
        for s in load(out).sessions.values()
        if s.verdict is not None
    ]
    return sum(a == b for a, b in both) / max(1, len(both))


def verdicts(out: Path) -> dict[str, Any]:
    from voirdire.transcript import load

    return {sid: (s.verdict.accepted if s.verdict else None) for sid, s in load(out).sessions.items()}


def row(name: str, fake: Fake, rep: dict[str, Any], n_verdicts: int) -> dict[str, Any]:
    t = rep["total_usage"]
    b = fake.bill
    uncached = t["prompt_tokens"] - t["cache_read_tokens"] - t["cache_write_tokens"]
    return {
        "setting": name,
        "requests": t["requests"],
        "input": uncached,
        "cached": t["cache_read_tokens"],
        "written": t["cache_write_tokens"],
        "output": t["completion_tokens"],
        "billed_usd": t["cost_usd"],
        "uncached_usd": t["uncached_cost_usd"],
        "per_verdict_usd": t["cost_usd"] / max(1, n_verdicts),
        "fake_bill_usd": b.usd,
        "fake_requests": b.requests,
        "tokens_equal": (t["requests"], uncached, t["cache_read_tokens"], t["cache_write_tokens"],
                         t["completion_tokens"]) == (b.requests, b.input, b.cached, b.written, b.output),
        "bill_equal_to_the_cent": round(t["cost_usd"], 2) == round(b.usd, 2),
    }  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--claims", type=int, default=200)
    ap.add_argument("--agree", type=float, default=0.8, help="share of claims whose first two examinations agree")
    ap.add_argument("--reference", type=int, default=1500, help="tokens of a claim's reference, long-prompt settings")
    ap.add_argument("--items", type=int, default=100, help="items of the repeats settings")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    q = (1 - math.sqrt(max(0.0, 2 * args.agree - 1))) / 2  # q² + (1 − q)² = agree
    fake = Fake(seed=args.seed, q=q)
    rows: list[dict[str, Any]] = []
    checks: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp, serving(fake) as url:
        folder = Path(tmp)
        prices = folder / "prices.toml"
        prices.write_text("[models]\n" + "".join(
            f'"{m}" = {{ input = {p[0]}, cached_input = {p[1]}, cache_write = {p[2]}, output = {p[3]} }}\n'
            for m, p in PRICES.items()
        ))  # fmt: skip
        data = claims(folder / "claims.jsonl", args.claims, 0)
        long = claims(folder / "long.jsonl", args.claims, args.reference)
        common = ["--questions", str(data), "--no-progress", "--prices", str(prices), "--majority",
                  "--concurrency", str(args.concurrency), "--max-tokens", "64"]  # fmt: skip
        with_long = [*common[:1], str(long), *common[2:]]
        openai = ["--model", f"openai-compatible:{MODEL_OPENAI}@{url}/v1"]
        anthropic = ["--model", f"anthropic:{MODEL_ANTHROPIC}"]
        import os

        os.environ["ANTHROPIC_BASE_URL"] = url
        os.environ.setdefault("ANTHROPIC_API_KEY", "bench-key-not-secret")
        ref = f"reference {args.reference} tok"
        settings = [
            ("Majority, OpenAI rule", common, openai, []),
            ("Majority --adaptive, OpenAI rule", common, openai, ["--adaptive"]),
            ("Majority, Anthropic rule", common, anthropic, []),
            (f"Majority, {ref}, OpenAI rule", with_long, openai, []),
            (f"Majority, {ref}, Anthropic rule", with_long, anthropic, []),
            (f"Majority, {ref}, Anthropic --no-prompt-cache", with_long, anthropic, ["--no-prompt-cache"]),
        ]
        outs: dict[str, Path] = {}
        fake.stable = 0.0  # Majority: every examination draws
        for name, base, model, extra in settings:
            fake.reset()
            out = folder / f"{len(outs)}.jsonl"
            rc, err = run(["examine", *base, *model, "--out", str(out), *extra])
            if rc != 0:
                print(f"{name}: exit {rc}\n{err}", file=sys.stderr)
                return 1
            outs[name] = out
            rows.append(row(name, fake, report(out, prices), args.claims))
        full, adaptive = verdicts(outs[settings[0][0]]), verdicts(outs[settings[1][0]])
        checks["adaptive_verdicts_identical"] = full == adaptive
        checks["adaptive_cost_per_verdict_ratio"] = rows[1]["per_verdict_usd"] / rows[0]["per_verdict_usd"]
        checks["first_two_agree_share"] = _agreeing(outs[settings[0][0]])
        # What each caching rule saved: the bill against the same calls uncached (and against --no-prompt-cache).
        checks["caching_saving"] = {r["setting"]: 1 - r["billed_usd"] / r["uncached_usd"] for r in rows}
        checks["caching_saving_anthropic_vs_no_prompt_cache"] = 1 - rows[4]["billed_usd"] / rows[5]["billed_usd"]

        # Repeats: five full repeats against sequential ones, decided at 0.8; 70 % of the items steady.
        fake.stable = 0.7
        items = claims(folder / "items.jsonl", args.items, 0)
        rep_common = ["--questions", str(items), "--no-progress", "--prices", str(prices),
                      "--concurrency", str(args.concurrency), "--max-tokens", "64",
                      "--repeats", "5", "--decided-at", "0.8", *openai]  # fmt: skip
        status = {}
        for name, extra in (("--repeats 5", []), ("--repeats 5 --stop-when-decided", ["--stop-when-decided"])):
            fake.reset()
            out = folder / f"rep{len(status)}.jsonl"
            rc, err = run(["examine", *rep_common, "--out", str(out), *extra])
            if rc != 0:
                print(f"{name}: exit {rc}\n{err}", file=sys.stderr)
                return 1
            rep = report(out, prices)
            rows.append(row(name, fake, rep, args.items))
            status[name] = {i["item_id"]: i["decided"] for i in rep["stability"]["items"]}
        names = list(status)
        checks["repeats_status_identical"] = status[names[0]] == status[names[1]]
        checks["repeats_calls_ratio"] = rows[-1]["requests"] / rows[-2]["requests"]

        # --max-cost at 20 % of the full run's estimate, then the same command resumed.
        fake.stable = 0.0
        # In a folder of its own beside a copy of the full run: the estimate's earlier transcript.
        alone = folder / "budget"
        alone.mkdir()
        shutil.copyfile(outs[settings[0][0]], alone / "full.jsonl")
        out = alone / "budget.jsonl"
        estimate = json.loads(run_out(["examine", *common, *openai, "--out", str(out), "--estimate", "--json"]))
        # The estimate's expected cost (an earlier transcript beside the run's: the full run's), else its bound.
        planned = estimate.get("expected_cost_usd") or estimate["cost_usd"]
        budget = 0.2 * planned
        fake.reset()
        argv = ["examine", *common, *openai, "--out", str(out), "--concurrency", "1"]
        rc, err = run([*argv, "--max-cost", f"{budget:.6f}"])
        spent = fake.bill.usd
        session = max(session_costs(outs[settings[0][0]]).values())
        rc2, _ = run(argv)
        stopped = [line for line in err.splitlines() if "run stopped" in line]
        checks["max_cost"] = {
            "estimate_usd": planned, "estimate_bound_usd": estimate["cost_usd"], "budget_usd": budget,
            "exit": rc, "spent_usd": spent, "over_budget_usd": spent - budget, "costliest_session_usd": session,
            "within_one_session": budget <= spent <= budget + session, "message": stopped,
            "resumed_exit": rc2, "resumed_verdicts_identical": verdicts(out) == full,
        }  # fmt: skip
    cols = ["setting", "requests", "input", "cached", "written", "output", "billed_usd", "uncached_usd",
            "per_verdict_usd", "fake_bill_usd", "bill_equal_to_the_cent"]  # fmt: skip
    width = max(len(r["setting"]) for r in rows)
    print(f"{'setting':<{width}}  " + "  ".join(f"{c:>12}" for c in cols[1:]))
    for r in rows:
        cells = [f"{r[c]:>12.4f}" if isinstance(r[c], float) else f"{r[c]!s:>12}" for c in cols[1:]]
        print(f"{r['setting']:<{width}}  " + "  ".join(cells))
    print(json.dumps(checks, indent=2))
    if args.json:
        args.json.write_text(json.dumps({"args": vars(args) | {"json": str(args.json)}, "rows": rows,
                                         "checks": checks}, indent=2))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
