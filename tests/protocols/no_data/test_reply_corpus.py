"""The labelled reply corpus: accuracy per category and flips of the No-Data LLM evaluator's readers.

``reply_corpus.jsonl`` holds replies to App. D.2's Prompt 1 (``reader`` label) and Prompts 2-3 (datapoint), with
the datapoint ``x`` they were asked about, each labelled by reading it before any reader ran on it: the 0/1 label or
the bit string the reply gives between its anchors, or ``refuse`` when it gives two, none, or nothing in the anchored
format. A *flip* reads another value than the label (0↔1, another bit string); a refusal (None, asked again by
App. D.2) is never a flip, and an *over-read* is a value read from a reply labelled ``refuse``.
``bench/reply_parsers_qa_nodata.py`` prints the same tables for the earlier readers.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.reply_corpus import check_corpus
from voirdire.protocols.no_data.llm import parse_datapoint, parse_label

CORPUS = Path(__file__).with_name("reply_corpus.jsonl")
SOURCES = {"written", "embedded-model", "paper"}
CATEGORIES = {
    "plain", "unterminated", "echoed_format", "several_labels", "several_datapoints", "continuation",
    "echoed_exemplars", "restated_datapoint", "off_format", "verbose_model_output", "wrong_length", "not_bits",
}  # fmt: skip
# Measured on the corpus (docs/no_data.md, "Reading the replies"); a change that reads fewer replies right fails.
MIN_ACCURACY = {"label": 0.99, "datapoint": 0.99}
MIN_CATEGORY_ACCURACY = 0.95


def _rows() -> list[dict]:
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


def read(row: dict) -> str:
    """The reader's value, told the datapoint asked about as the evaluator tells it; "refuse" for None."""
    if row["reader"] == "label":
        value: object = parse_label(row["text"], row["x"])
    else:
        value = parse_datapoint(row["text"], x=row["x"])
    return "refuse" if value is None else str(value)


def test_corpus_is_well_formed() -> None:
    rows = _rows()
    assert len(rows) >= 80
    assert len({r["id"] for r in rows}) == len(rows)
    assert len({(r["reader"], r["text"], r["x"]) for r in rows}) == len(rows), "a reply is listed twice"
    for r in rows:
        assert r["reader"] in ("label", "datapoint"), r
        assert r["category"] in CATEGORIES, r
        assert r["source"] in SOURCES, r
        assert r["split"] in ("dev", "held-out"), r
        assert set(r["x"]) <= {"0", "1"}, r
        if r["reader"] == "label":
            assert r["label"] in ("0", "1", "refuse"), r
        else:
            assert r["label"] == "refuse" or (set(r["label"]) <= {"0", "1"} and len(r["label"]) == len(r["x"])), r
    sources = Counter(r["source"] for r in rows)
    assert sources["embedded-model"] >= 50 and sources["written"] >= 60


def test_no_flips_no_over_reads_and_accuracy_per_reader() -> None:
    check_corpus(_rows(), read, MIN_ACCURACY, MIN_CATEGORY_ACCURACY)


LONG_REPLIES = {
    "anchors": "|label| ",
    "labels": "|label|\n1\n|label|\n",
    "spaced-anchors": "|label|" + " " * 390 + "|label|",
    "pipes": "|",
    "headers": "Datapoint: 0101\n|label| 1 |label|\n",
    "datapoint-anchors": "|datapoint| 0101 ",
    "exemplar-blocks": "Datapoint: 0101\nLabel: 1\n|datapoint| 0101 |datapoint|\n",
    "bits": "|datapoint| " + "01" * 150 + " ",
}


@pytest.mark.parametrize("text", LONG_REPLIES.values(), ids=LONG_REPLIES.keys())
def test_linear_time_on_long_replies(text: str) -> None:
    """100,000 characters of adversarial text read in well under a second."""
    reply = (text * (100_000 // len(text) + 1))[:100_000]
    start = time.perf_counter()
    parse_label(reply, "0" * 12)
    parse_label(reply)
    parse_datapoint(reply, x="0" * 12)
    parse_datapoint(reply)
    assert time.perf_counter() - start < 1.0
