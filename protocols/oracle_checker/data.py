"""The paper's data (§5), read from ``../shared/data`` (each folder's SOURCE.md says where it comes from).

- ``docred``: Re-DocRED dev (500 documents, 4,110 sentences; the paper sampled 5,000 DocRED sentences at random,
  App. A). Sentences are the documents' token lists joined with spaces (as DocRED's tokens, punctuation spaced),
  with the labelled entity mentions of that sentence as ``gold``; the order is a fixed shuffle (seed 0), so
  ``--limit N`` is a random sample of N sentences.
- ``msrp``: the MSR Paraphrase test split (1,725 pairs); the paper used 500 random test pairs for its sanity checks
  and 5,000 pairs for Table 2. Here the order is a fixed shuffle (seed 0) of the test split, so ``--limit 500`` is
  500 random test pairs.
"""

from __future__ import annotations

import csv
import json
import os
import random
from pathlib import Path

from .items import SentenceItem

DATA_ENV = "VOIRDIRE_ORACLE_DATA_DIR"
DATASETS = ("docred", "msrp")


class DataError(ValueError):
    """The data is missing or unreadable."""


def data_dir() -> Path:
    """``$VOIRDIRE_ORACLE_DATA_DIR``, or ``shared/data`` beside or inside the repository or the cwd."""
    candidates: list[Path] = [Path(os.environ[DATA_ENV])] if os.environ.get(DATA_ENV) else []
    repo = Path(__file__).resolve().parents[2]
    for base in (repo, Path.cwd()):
        candidates += [base.parent / "shared" / "data", base / "shared" / "data"]
    for c in candidates:
        if (c / "docred").is_dir() or (c / "paraphrase").is_dir():
            return c
    raise DataError(f"data not found (set ${DATA_ENV}); looked in: {', '.join(map(str, candidates))}")


def docred_sentences(path: Path | None = None) -> list[SentenceItem]:
    """Every Re-DocRED dev sentence with its labelled mentions, in a fixed random order (seed 0)."""
    path = path or data_dir() / "docred" / "dev_revised.json"
    try:
        docs = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise DataError(f"{path}: {exc}") from None
    items = []
    for d, doc in enumerate(docs):
        gold: dict[int, list[str]] = {}
        for entity in doc["vertexSet"]:
            for mention in entity:
                names = gold.setdefault(mention["sent_id"], [])
                if mention["name"] not in names:
                    names.append(mention["name"])
        for i, tokens in enumerate(doc["sents"]):
            items.append(SentenceItem(id=f"docred-{d}-{i}", text=" ".join(tokens), gold=gold.get(i, [])))
    random.Random(0).shuffle(items)
    return items


def msrp_pairs(path: Path | None = None) -> list[dict[str, str]]:
    """The MSRP test pairs (``Quality  #1 ID  #2 ID  #1 String  #2 String``) in a fixed random order (seed 0)."""
    path = path or data_dir() / "paraphrase" / "msr_paraphrase_test.txt"
    try:
        with path.open(encoding="utf-8-sig", newline="") as f:
            rows = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    except OSError as exc:
        raise DataError(f"{path}: {exc}") from None
    pairs = [
        {"id": f"msrp-{r[1]}-{r[2]}", "sentence1": r[3], "sentence2": r[4], "label": "yes" if r[0] == "1" else "no"}
        for r in rows[1:]
        if len(r) == 5
    ]
    random.Random(0).shuffle(pairs)
    return pairs
