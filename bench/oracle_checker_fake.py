"""The oracle–checker batches against a fake OpenAI-compatible endpoint (tests/fake_openai.py, 127.0.0.1 only).

Runs ``voirdire check-entities --data docred --limit 20`` and ``voirdire check-paraphrase --data msrp --limit 20``
through ``--model openai-compatible:fake@URL``, once with an endpoint that returns n choices (``n=k``: one request
per query) and, for the entities, once with an endpoint that returns one choice whatever n asks (k requests per
query). The fake oracle is rule-based: Prompt 1 lists the sentence's capitalised word runs as entities (a linear
extractor), Prompts 3-4 give fixed replacements, Prompt 5 answers from word overlap, Prompt 6 yes, Prompt 7 five
light rewrites. It measures plumbing and request counts, not any model's quality.

    .venv/bin/python bench/oracle_checker_fake.py [--out docs/results/oracle_checker_fake.json]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.fake_openai when run as a script

from tests.fake_openai import FakeOpenAIServer
from voirdire.cli import main
from voirdire.transcript import ModelCall, load

EXTRACT = "Please perform entity recognition"


def respond(messages: list[dict[str, Any]]) -> str:
    user = messages[-1]["content"]
    if user.startswith(EXTRACT):
        s = re.search(r'sentence: "(.*)"', user, re.S).group(1)  # type: ignore[union-attr]
        runs = re.findall(r"\b[A-Z][\w-]*(?: [A-Z][\w-]*)*", s)
        return "\n".join(f"{i}. name: {r}" for i, r in enumerate(dict.fromkeys(runs), 1))
    if "could replace" in user or user.startswith("Please list synonyms"):
        e = re.search(r'(?:replace|synonyms for) "([^"]+)"', user).group(1)  # type: ignore[union-attr]
        return f"1. Zq{abs(hash(e)) % 10**6}\n2. Other"
    if user.startswith("Is the entity"):
        return "[[named entity]]"
    if "two sentences are semantically" in user:
        a, b = re.findall(r"'(.*?)'(?: 2\.|\n)", user + "\n")[:2] or ["", ""]
        wa, wb = set(a.lower().split()), set(b.lower().split())
        yes = len(wa & wb) / max(1, len(wa | wb)) > 0.5
        return json.dumps({"answer": "yes" if yes else "no", "explanation": "word overlap"})
    if "two texts" in user:
        return json.dumps({"answer": "yes", "explanation": "same"})
    if user.startswith("Generate five paraphrases"):
        s = re.search(r"sentence: '(.*)'", user, re.S).group(1)  # type: ignore[union-attr]
        return json.dumps({"paraphrases": [s.replace(" the ", " a ", 1), s + " indeed", "In short, " + s, s, s]})
    return "no"


def run(command: list[str], honour_n: bool, out: Path) -> dict[str, Any]:
    with FakeOpenAIServer(respond, honour_n=honour_n) as server:
        args = [*command, "--model", f"openai-compatible:fake@{server.url}", "--out", str(out), "--fresh"]
        with contextlib.redirect_stdout(io.StringIO()) as buf:
            rc = main([*args, "--no-progress", "--json"])
        bodies = list(server.requests)
    result = json.loads(buf.getvalue())
    t = load(out)
    sessions = list(t.sessions.values())
    extraction = [b for b in bodies if b["messages"][-1]["content"].startswith(EXTRACT)]
    tested = [s for s in sessions if s.verdict is not None and s.verdict.decision in ("accepted", "rejected")]
    per_session = [sum(e.requests for e in s.events if isinstance(e, ModelCall)) for s in tested]
    return {
        "command": " ".join(command) + (" (endpoint honours n)" if honour_n else " (endpoint returns 1 choice)"),
        "rc": rc,
        "sessions": len(sessions),
        "verdicts": sum(s.verdict is not None for s in sessions),
        "decisions": result["report"].get("decisions"),
        "requests": len(bodies),
        "extraction_requests": len(extraction),
        "sessions_tested": len(tested),
        "oracle_requests_per_tested_session": per_session,
        "report": {k: v for k, v in result["report"].items() if k not in ("rows",)},
    }


def main_() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("docs/results/oracle_checker_fake.json"))
    a = ap.parse_args()
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for command, honour in (
            (["check-entities", "--data", "docred", "--limit", "20"], True),
            (["check-entities", "--data", "docred", "--limit", "20"], False),
            (["check-paraphrase", "--data", "msrp", "--limit", "20"], True),
        ):
            r = run(command, honour, Path(tmp) / "t.jsonl")
            runs.append(r)
            print(json.dumps({k: r[k] for k in r if k != "report"}))
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(runs, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main_()
