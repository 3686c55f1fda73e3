"""How often DCR's sentence splitting cut a benchmark candidate at an abbreviation: the old full-stop rule against
the spaCy segmenter of protocols/dcr/sentences.py (and pysbd, when it is installed, for comparison).

    python bench/dcr_sentences.py [--out docs/results/dcr_sentences.json]
    python bench/dcr_sentences.py --relocate docs/results/dcr/dcr-summeval-embedded-zero.jsonl.gz ...

``--relocate`` reads stored DCR transcripts and counts, per evaluation round, the reasons whose ``sentence`` is in
its candidate (coverage.py): what those rounds are scored from today.

A candidate *has an abbreviation sentence* when an abbreviation ("U.S.", "e.g.", "d.c.", "St.", "Jr.", "Inc.",
"Fla.": dotted, or one of spaCy's English tokenizer abbreviations, or a title) is followed by more text. A splitter
*breaks* it when it ends a sentence right after such an abbreviation and the next sentence starts with a lower-case
letter, a digit or punctuation, or the abbreviation is a title ("Sgt. | Tom Wright"): never a sentence end. A cut
after an abbreviation before a capital ("the U.S. | He lives there") is sometimes a real end; it is counted apart
(``--show`` prints them). DCR's segmenter mends exactly the first kind of cut after spaCy's parse, so its "broken"
count is 0 by construction; the parse alone shows what the parse gets right by itself.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from voirdire.protocols.dcr.data import load_benchmark
from voirdire.protocols.dcr.sentences import TITLES, abbreviations, segmenter, split_sentences

BENCHMARKS = ("summeval", "qags-cnn", "qags-xsum", "paws", "msrp")
_BOUNDARY = re.compile(r"(?<=[.!?])(?:\s*['\"”’)\]])?\s+")  # the splitter DCR used before the segmenter


def old_split(text: str) -> list[str]:
    out, start = [], 0
    for m in _BOUNDARY.finditer(text):
        if text[start : m.end()].strip():
            out.append(text[start : m.end()].strip())
        start = m.end()
    return [*out, text[start:].strip()] if text[start:].strip() else out


def abbreviation_at(text: str) -> list[tuple[int, bool]]:
    """(end, is a title) of each abbreviation in ``text`` that more text follows."""
    known = abbreviations()
    out = []
    for m in re.finditer(r"\S+", text):
        word = m.group().lstrip("([\"'`")
        if m.end() >= len(text.rstrip()) or not word.endswith(".") or not any(c.isalpha() for c in word):
            continue
        last = word.rsplit("-", 1)[-1].lower()
        if "." in word[:-1] or word.lower() in known or last in known:
            out.append((m.end(), last.rstrip(".") in TITLES))
    return out


def cuts(text: str, pieces: list[str]) -> dict[int, str]:
    """The character offset where each piece but the last ends, and the text that follows it."""
    out, pos = {}, 0
    for piece in pieces:
        start = text.find(piece.strip(), pos)
        if start < 0:
            continue
        pos = start + len(piece.strip())
        out[pos] = text[pos:].lstrip()
    return out


def measure(candidates: list[str], split: Callable[[str], list[str]], show: bool = False) -> dict[str, int]:
    broken = capital = 0
    for text in candidates:
        ends = cuts(text, split(text))
        wrong = cap = False
        for end, title in abbreviation_at(text):
            after = ends.get(end)
            if after is None or not after:
                continue
            if title or after[0].islower() or after[0].isdigit() or not after[0].isalnum():
                wrong = True
            else:
                cap = True
        broken += wrong
        capital += cap and not wrong
        if show and cap and not wrong:
            print("   cut before a capital:", split(text))
    return {"broken": broken, "cut_before_a_capital": capital}


def relocate(path: Path) -> dict[str, object]:
    from voirdire.protocols.dcr.coverage import Candidate
    from voirdire.transcript import Step, load

    if path.suffix == ".gz":  # the stored transcripts are gzipped
        with tempfile.TemporaryDirectory() as tmp:
            plain = Path(tmp) / path.stem
            plain.write_bytes(gzip.decompress(path.read_bytes()))
            return {**relocate(plain), "transcript": str(path)}
    rounds = reasons = found = any_found = covered = 0
    for session in load(path).sessions.values():
        for e in session.events:
            if not (isinstance(e, Step) and e.name == "evaluation"):
                continue
            history = session.verdict.statistics.get("history", []) if session.verdict else []
            candidate = next((h["candidate"] for h in history if h["round"] == e.data["round"]), None)
            if candidate is None:
                continue
            cut = Candidate(candidate)
            located = cut.locate([r["sentence"] for r in e.data["reasons"]])
            inside = [loc.status in ("scored", "paragraph") for loc in located]
            rounds += 1
            reasons += len(located)
            found += sum(inside)
            any_found += any(inside)
            covered += any(inside) and not cut.not_evaluated(located, inside)
    return {
        "transcript": str(path),
        "rounds": rounds,
        "reasons": reasons,
        "reasons_in_candidate": found,
        "rounds_with_a_reason_in_candidate": any_found,
        "rounds_with_every_sentence_evaluated": covered,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("docs/results/dcr_sentences.json"))
    ap.add_argument("--show", action="store_true", help="print DCR's cuts before a capital")
    ap.add_argument("--relocate", type=Path, nargs="+", help="stored DCR transcripts to re-read")
    args = ap.parse_args()
    if args.relocate:
        for path in args.relocate:
            print(json.dumps(relocate(path)))
        return
    splitters: dict[str, Callable[[str], list[str]]] = {
        "old full-stop rule": old_split,
        "spaCy parse alone": lambda text: [s.text for s in segmenter()(text).sents if s.text.strip()],
        "spaCy + abbreviation rule (DCR)": split_sentences,
    }
    try:
        import pysbd

        splitters["pysbd 0.3"] = pysbd.Segmenter(language="en", clean=False).segment
    except ImportError:
        pass
    rows = []
    for name in BENCHMARKS:
        candidates = list(dict.fromkeys(e.item.candidate for e in load_benchmark(name)))
        with_abbr = [c for c in candidates if abbreviation_at(c)]
        row: dict[str, object] = {
            "benchmark": name,
            "candidates": len(candidates),
            "with_abbreviation": len(with_abbr),
            "share": round(len(with_abbr) / len(candidates), 4),
        }
        parsed = splitters["spaCy parse alone"]
        joins = [c for c in candidates if len(split_sentences(c)) != len(parsed(c))]
        row["joined_by_the_rule"] = len(joins)
        for text in joins if args.show else []:
            print("   joined:", split_sentences(text))
        for label, split in splitters.items():
            t0 = time.process_time()
            row[label] = measure(with_abbr, split, args.show and split is split_sentences)
            row[label]["cpu_s"] = round(time.process_time() - t0, 2)  # type: ignore[index]
        rows.append(row)
        print(json.dumps(row), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"command": "python bench/dcr_sentences.py", "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
