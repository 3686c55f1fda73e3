"""Accuracy per category and flips of the QA entailment and No-Data reply readers on their labelled corpora, old
versus new.

The corpora are the "qa" rows of ``tests/replies/corpus.jsonl`` (the entailment label, QA2D statement, 1-5 score
and partial-marks explanation readers) and its "no-data" rows (the ``|label|`` and ``|datapoint|`` readers), each
reply labelled by reading it before any reader ran on it: what the reply says, or ``refuse`` when it says both,
neither, or nothing in the prompt's format. A *flip* reads another value than the
label (entailment↔contradiction↔neutral, 0↔1, another statement, score, step count or bit string); a refusal
(``ParseFailure`` / ``None``) is never a flip. An *over-read* is a value read from a reply labelled ``refuse``.
"old" is each module at ``OLD_COMMIT`` (read from git), "new" the installed one.

    python bench/reply_parsers_qa_nodata.py [--out docs/results/reply_parsers_qa_nodata.json]

Prints the per-category tables (markdown), writes the JSON and puts each protocol's table between the markers in
docs/qa_entailment.md and docs/no_data.md.
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

from voirdire.protocols.no_data import llm as new_llm
from voirdire.protocols.qa_entailment import parsing as new_parsing, partial_marks as new_partial_marks
from voirdire.protocols.qa_entailment.parsing import CLOSENESS_SCALE, DIFFICULTY_SCALE

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests/replies/corpus.jsonl"  # the rows of origin "qa" and "no-data" are these protocols' corpora
QA_CORPUS = "qa"
ND_CORPUS = "no-data"
OLD_COMMIT = "4fbca1860c3fb53109004f070efaf702f963ec56"  # the readers before the clause / block readers
OLD_PATHS = {
    "parsing": ("protocols/qa_entailment/parsing.py", "voirdire.protocols.qa_entailment"),
    "partial_marks": ("protocols/qa_entailment/partial_marks.py", "voirdire.protocols.qa_entailment"),
    "llm": ("protocols/no_data/llm.py", "voirdire.protocols.no_data"),
}
SCALES = {"difficulty": DIFFICULTY_SCALE, "closeness": CLOSENESS_SCALE, "none": None}
DOCS = {"qa": ROOT / "docs/qa_entailment.md", "nodata": ROOT / "docs/no_data.md"}
MARK_BEGIN, MARK_END = "<!-- reply-parsers:begin -->", "<!-- reply-parsers:end -->"

# 100,000-character replies: the worst cases for each reader's scanning.
LONG_REPLIES = {
    "entailment": {
        "labels": "entailment contradiction neutral " * 3100,
        "negated lists": "it is not entailment, contradiction, or neutral, " * 2000,
        "clauses": "The premise does not entail the hypothesis, but it is not a contradiction; " * 1300,
    },
    "statement": {"lines": "S: The show is filmed there.\n" * 3500, "one line": "word " * 20_000},
    "score": {"numbers": "3 " * 50_000, "scale lines": "1: Very easy\n" * 7700, "prose": "I would rate it 2. " * 5300},
    "explanation": {"steps": "1. step [[INFO]]\n" * 6000, "markers": "[[INFO]] " * 11_000},
    "label": {"anchors": "|label| " * 12_500, "labels": "|label|\n1\n|label|\n" * 5600, "pipes": "|" * 100_000},
    "datapoint": {"anchors": "|datapoint| 0101 " * 6000, "bits": "|datapoint| " + "01" * 49_990},
}

Reader = Callable[[dict], str]


def load_old(key: str) -> ModuleType:
    """A reader module as it was at ``OLD_COMMIT``; its relative imports resolve in the installed package."""
    path, package = OLD_PATHS[key]
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{OLD_COMMIT}:{path}"], check=True, capture_output=True, text=True
    ).stdout
    module = ModuleType(f"{package}._old_{key}")
    module.__file__ = f"{OLD_COMMIT[:8]}:{path}"
    module.__package__ = package
    sys.modules[module.__name__] = module
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


def _refused(value: object) -> bool:
    return value is None or type(value).__name__ == "ParseFailure"


def qa_reader(parsing: ModuleType, partial_marks: ModuleType) -> Reader:
    def read(row: dict) -> str:
        reader, text = row["reader"], row["text"]
        if reader == "entailment":
            value = parsing.parse_entailment(text)
        elif reader == "statement":
            value = parsing.parse_statement(text)
        elif reader == "score":
            value = parsing.parse_score(text, scale=SCALES[row.get("scale", "none")])
        else:
            value = partial_marks.parse_explanation(text)
            if not _refused(value):
                value = f"{value.n_steps}/{value.n_info}/{value.n_assumption}"
        return "refuse" if _refused(value) else str(value)

    return read


def nd_reader(llm: ModuleType, *, with_x: bool) -> Reader:
    """The No-Data readers; the new ones are also told the datapoint asked about (``x=``), as the evaluator does."""

    def read(row: dict) -> str:
        reader, text, x = row["reader"], row["text"], row["x"]
        if reader == "label":
            value = llm.parse_label(text, x=x) if with_x else llm.parse_label(text)
        else:
            value = llm.parse_datapoint(text, len(x), x=x) if with_x else llm.parse_datapoint(text, len(x))
        return "refuse" if _refused(value) else str(value)

    return read


def score(rows: list[dict], read: Reader) -> dict:
    """Accuracy, flips, refusals of a value and over-reads per (reader, category), reader, source and split."""
    groups: dict[str, dict[str, float]] = {}

    def add(key: str, label: str, got: str) -> None:
        g = groups.setdefault(key, {"n": 0, "correct": 0, "flips": 0, "wrong_refusals": 0, "over_reads": 0})
        g["n"] += 1
        g["correct"] += got == label
        g["flips"] += "refuse" not in (label, got) and label != got
        g["wrong_refusals"] += got == "refuse" and label != "refuse"
        g["over_reads"] += label == "refuse" and got != "refuse"

    flips: list[dict] = []
    misses: list[dict] = []
    for r in rows:
        got = read(r)
        for key in (
            f"{r['reader']}/{r['category']}",
            f"{r['reader']}/*",
            f"{r['reader']}/source/{r['source']}",
            f"{r['reader']}/split/{r['split']}",
            "all",
        ):
            add(key, r["label"], got)
        if got != r["label"]:
            miss = {"id": r["id"], "label": r["label"], "read": got, "text": r["text"][:200]}
            (flips if "refuse" not in (r["label"], got) else misses).append(miss)
    for g in groups.values():
        g["accuracy"] = round(g["correct"] / g["n"], 4)
    return {"groups": groups, "flips": flips, "misses": misses}


def timing(read: Reader, kind: str) -> dict[str, float]:
    """Seconds to read 100,000 characters, per reader and kind of reply (best of three)."""
    out = {}
    readers = ("entailment", "statement", "score", "explanation") if kind == "qa" else ("label", "datapoint")
    for reader in readers:
        for name, text in LONG_REPLIES[reader].items():
            row = {"reader": reader, "text": text[:100_000], "scale": "difficulty", "x": "0" * 12}
            best = float("inf")
            for _ in range(3):
                start = time.perf_counter()
                read(row)
                best = min(best, time.perf_counter() - start)
            out[f"{reader}, {name}"] = round(best, 4)
    return out


def table(old: dict, new: dict) -> str:
    lines = [
        "| reader | category | n | old accuracy | old flips | old over-reads | new accuracy | new flips "
        "| new over-reads | new refusals of a value |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    keys = [k for k in new["groups"] if k != "all"]
    readers = list(dict.fromkeys(k.split("/")[0] for k in keys))
    for reader in readers:
        mine = sorted(k for k in keys if k.split("/")[0] == reader)
        cats = [k for k in mine if k.count("/") == 1 and not k.endswith("/*")]
        rest = [k for k in mine if k.count("/") == 2]
        for key in [*cats, f"{reader}/*", *rest]:
            o, n = old["groups"][key], new["groups"][key]
            name = "**all**" if key.endswith("/*") else key.split("/", 1)[1]
            lines.append(
                f"| {reader} | {name} | {n['n']} | {100 * o['accuracy']:.1f} % | {o['flips']} | {o['over_reads']} "
                f"| {100 * n['accuracy']:.1f} % | {n['flips']} | {n['over_reads']} | {n['wrong_refusals']} |"
            )
    o, n = old["groups"]["all"], new["groups"]["all"]
    lines.append(
        f"| | **all** | {n['n']} | {100 * o['accuracy']:.1f} % | {o['flips']} | {o['over_reads']} "
        f"| {100 * n['accuracy']:.1f} % | {n['flips']} | {n['over_reads']} | {n['wrong_refusals']} |"
    )
    return "\n".join(lines)


def _rows(origin: str) -> list[dict]:
    rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if r["origin"] == origin]


def _put_table(doc: Path, text: str) -> None:
    content = doc.read_text(encoding="utf-8")
    if MARK_BEGIN in content and MARK_END in content:
        head, rest = content.split(MARK_BEGIN, 1)
        doc.write_text(f"{head}{MARK_BEGIN}\n{text}\n{MARK_END}{rest.split(MARK_END, 1)[1]}", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "docs/results/reply_parsers_qa_nodata.json")
    parser.add_argument("--no-docs", action="store_true", help="do not rewrite the tables in the docs")
    args = parser.parse_args()
    readers = {
        "qa": (
            qa_reader(load_old("parsing"), load_old("partial_marks")),
            qa_reader(new_parsing, new_partial_marks),
            QA_CORPUS,
        ),
        "nodata": (nd_reader(load_old("llm"), with_x=False), nd_reader(new_llm, with_x=True), ND_CORPUS),
    }
    result: dict = {"old_readers": f"{', '.join(p for p, _ in OLD_PATHS.values())} at {OLD_COMMIT}"}
    for kind, (old_read, new_read, corpus) in readers.items():
        rows = _rows(corpus)
        old, new = score(rows, old_read), score(rows, new_read)
        result[kind] = {
            "corpus": f"{CORPUS.relative_to(ROOT)} ({corpus})",
            "replies": len(rows),
            "old": old,
            "new": new,
            "seconds_for_100k_characters": {"old": timing(old_read, kind), "new": timing(new_read, kind)},
        }
        text = table(old, new)
        print(f"## {kind}: {CORPUS.relative_to(ROOT)}, origin {corpus} ({len(rows)} replies)\n\n{text}\n")
        print(f"flips: old {len(old['flips'])}, new {len(new['flips'])}")
        print(f"seconds for 100,000 characters: {result[kind]['seconds_for_100k_characters']}\n")
        if not args.no_docs:
            _put_table(DOCS[kind], text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
