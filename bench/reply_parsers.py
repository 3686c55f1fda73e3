"""Accuracy per category and verdict flips of the LMvLM reply readers on the labelled corpus, old versus new.

The corpus is the "lmvlm" part of ``tests/replies/corpus.jsonl``: replies to the Stage 3 decision prompt and to
the Yes/No prompts (Stage 2 follow-up, the AYS baseline), each labelled by reading it before any reader ran on it.
A *flip* reads the opposite verdict (correct↔incorrect, yes↔no); a refusal (``ParseError``, inconclusive for the
protocol) is never a flip. "old" is the keyword-window reader that preceded the clause reader (the module at
``OLD_COMMIT``, read from git, or ``--old FILE``); "new" is the installed ``parsing`` module.

    python bench/reply_parsers.py [--old FILE] [--out docs/results/reply_parsers.json]

Prints the per-category table (markdown), writes the JSON and puts the table between the markers in
docs/cross_examination.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from voirdire.protocols.cross_examination import parsing as new_parsing
from voirdire.session.protocol import ParseError

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests/replies/corpus.jsonl"  # the rows of origin "lmvlm" are this protocol's corpus
OLD_COMMIT = "9f23a68d6222c9dc6e0f0f403246d87e018d6aed"  # the last keyword-window reader
OLD_PATH = "protocols/cross_examination/parsing.py"
MIXED = 'Although it may not be incorrect, the claim that "X" (which I doubt) is, in my view, not correct; '
LONG_REPLIES = {"mixed clauses": MIXED * 1000, "verdict words": "correct " * 12_500}

DOC = ROOT / "docs/cross_examination.md"
MARK_BEGIN, MARK_END = "<!-- reply-parsers:begin -->", "<!-- reply-parsers:end -->"

Reader = Callable[[str, str], str]


def load_old(path: Path | None) -> ModuleType:
    """The earlier reader module, from a file or from git at ``OLD_COMMIT``."""
    if path is None:
        name = f"{OLD_COMMIT[:8]}:{OLD_PATH}"
        source = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{OLD_COMMIT}:{OLD_PATH}"], check=True, capture_output=True, text=True
        ).stdout
    else:
        name, source = str(path), path.read_text(encoding="utf-8")
    module = ModuleType("old_reply_parsing")
    module.__file__ = name
    sys.modules[module.__name__] = module
    exec(compile(source, name, "exec"), module.__dict__)
    return module


def reader_of(module: ModuleType) -> Reader:
    def read(reader: str, text: str) -> str:
        try:
            if reader == "decision":
                return str(module.parse_decision(text))
            return "yes" if module.parse_yes_no(text) else "no"
        except ParseError:
            return "refuse"

    return read


def score(rows: list[dict], read: Reader) -> dict:
    """Accuracy, flips and refusals per (reader, category), per reader, per source and per split."""
    groups: dict[str, dict[str, int]] = {}

    def add(key: str, label: str, got: str) -> None:
        g = groups.setdefault(key, {"n": 0, "correct": 0, "flips": 0, "refusals": 0, "wrong_refusals": 0})
        g["n"] += 1
        g["correct"] += got == label
        g["flips"] += "refuse" not in (label, got) and label != got
        g["refusals"] += got == "refuse"
        g["wrong_refusals"] += got == "refuse" and label != "refuse"

    flips: list[dict] = []
    misses: list[dict] = []  # wrong readings that are not flips
    for r in rows:
        got = read(r["reader"], r["text"])
        for key in (
            f"{r['reader']}/{r['category']}",
            f"{r['reader']}/*",
            f"source/{r['source']}",
            f"split/{r['split']}",
            "all",
        ):
            add(key, r["label"], got)
        if got != r["label"]:
            miss = {"id": r["id"], "label": r["label"], "read": got, "text": r["text"][:160]}
            (flips if "refuse" not in (r["label"], got) else misses).append(miss)
    for g in groups.values():
        g["accuracy"] = round(g["correct"] / g["n"], 4)
    return {"groups": groups, "flips": flips, "misses": misses}


def timing(read: Reader) -> dict[str, float]:
    """Seconds to read 100,000 characters, per reader and kind of reply (best of three)."""
    out = {}
    for name, text in LONG_REPLIES.items():
        for reader in ("decision", "yes_no"):
            best = float("inf")
            for _ in range(3):
                start = time.perf_counter()
                read(reader, text[:100_000])
                best = min(best, time.perf_counter() - start)
            out[f"{reader}, {name}"] = round(best, 4)
    return out


def table(old: dict, new: dict) -> str:
    lines = [
        "| reader | category | n | old accuracy | old flips | new accuracy | new flips | new refusals of a verdict |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    keys = sorted(k for k in new["groups"] if "/" in k and not k.startswith(("source/", "split/")))
    keys = [k for k in keys if not k.endswith("/*")] + [k for k in keys if k.endswith("/*")]
    for key in [*keys, *sorted(k for k in new["groups"] if k.startswith(("source/", "split/"))), "all"]:
        o, n = old["groups"][key], new["groups"][key]
        reader, _, category = key.partition("/")
        name = f"**{reader} (all)**" if category == "*" else (category if reader in ("decision", "yes_no") else key)
        lines.append(
            f"| {reader if reader in ('decision', 'yes_no') else ''} | {name} | {n['n']} | {100 * o['accuracy']:.1f} % "
            f"| {o['flips']} | {100 * n['accuracy']:.1f} % | {n['flips']} | {n['wrong_refusals']} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", type=Path, help=f"the earlier parsing.py (default: git show {OLD_COMMIT[:8]})")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--out", type=Path, default=ROOT / "docs/results/reply_parsers.json")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [r for r in rows if r.get("origin", "lmvlm") == "lmvlm"]
    old_read, new_read = reader_of(load_old(args.old)), reader_of(new_parsing)
    old, new = score(rows, old_read), score(rows, new_read)
    result = {
        "corpus": str(args.corpus.relative_to(ROOT) if args.corpus.is_relative_to(ROOT) else args.corpus),
        "replies": len(rows),
        "old_reader": f"{OLD_PATH} at {OLD_COMMIT}" if args.old is None else str(args.old),
        "old": old,
        "new": new,
        "seconds_for_100k_characters": {"old": timing(old_read), "new": timing(new_read)},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(table(old, new))
    doc = DOC.read_text(encoding="utf-8")
    if MARK_BEGIN in doc and MARK_END in doc:
        head, rest = doc.split(MARK_BEGIN, 1)
        DOC.write_text(
            f"{head}{MARK_BEGIN}\n{table(old, new)}\n{MARK_END}{rest.split(MARK_END, 1)[1]}", encoding="utf-8"
        )
    seconds = result["seconds_for_100k_characters"]
    print(f"\nflips: old {len(old['flips'])}, new {len(new['flips'])}; seconds for 100,000 characters: {seconds}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
