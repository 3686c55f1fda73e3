"""The labelled reply corpus: accuracy per category and flips of the QA entailment readers.

``reply_corpus.jsonl`` holds replies to the Table 14 entailment prompt (``reader`` entailment), the QA2D prompt
(statement), the Table 17 scoring prompts (score, with the prompt's ``scale``) and the Table 17 explanation prompt
(explanation), each labelled by reading it, before any reader ran on it: the label, statement, score or
"steps/info/assumption" counts a person takes from it, or ``refuse`` when it says both, neither, or nothing in the
prompt's format. A *flip* reads another value than the label; a refusal (``ParseFailure``) is never a flip, and an
*over-read* is a value read from a reply labelled ``refuse``. ``bench/reply_parsers_qa_nodata.py`` prints the same
tables for the earlier readers.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.reply_corpus import check_corpus
from voirdire.protocols.qa_entailment.parsing import (
    CLOSENESS_SCALE,
    DIFFICULTY_SCALE,
    ParseFailure,
    parse_entailment,
    parse_score,
    parse_statement,
)
from voirdire.protocols.qa_entailment.partial_marks import parse_explanation

CORPUS = Path(__file__).with_name("reply_corpus.jsonl")
READERS = {"entailment", "statement", "score", "explanation"}
SCALES = {"difficulty": DIFFICULTY_SCALE, "closeness": CLOSENESS_SCALE, "none": None}
SOURCES = {"written", "embedded-model", "paper"}
CATEGORIES = {
    "entailment": {
        "plain", "echo", "negation", "elimination", "several_labels", "hedge", "verb_form", "off_vocabulary",
        "verbose_model_output",
    },
    "statement": {
        "plain", "prefix", "quotes", "continuation", "echoed_answer", "lead_in", "echoed_pattern", "other_field",
        "two_candidates", "extra_text", "question", "empty", "verbose_model_output",
    },
    "score": {
        "plain", "scale_label", "mismatched_label", "scale_echo", "several_numbers", "hedge", "verbose_model_output",
        "no_number", "out_of_range", "negation",
    },
    "explanation": {
        "plain", "markers", "markdown", "preamble", "epilogue", "numbering", "no_steps", "numbers_in_text",
        "verbose_model_output",
    },
}  # fmt: skip
# Measured on the corpus (docs/qa_entailment.md, "Reading the replies"); a change that reads fewer replies right
# fails here.
MIN_ACCURACY = {"entailment": 0.99, "statement": 0.99, "score": 0.99, "explanation": 0.98}
MIN_CATEGORY_ACCURACY = 0.95
MIN_SIZE = {"entailment": 150, "statement": 60, "score": 60, "explanation": 30}


def _rows() -> list[dict]:
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


def read(row: dict) -> str:
    """The reader's value as a label: the label, statement, score or step counts, or "refuse" for a ParseFailure."""
    reader, text = row["reader"], row["text"]
    if reader == "entailment":
        value: object = parse_entailment(text)
    elif reader == "statement":
        value = parse_statement(text)
    elif reader == "score":
        value = parse_score(text, scale=SCALES[row["scale"]])
    else:
        value = parse_explanation(text)
        if not isinstance(value, ParseFailure):
            value = f"{value.n_steps}/{value.n_info}/{value.n_assumption}"
    return "refuse" if isinstance(value, ParseFailure) else str(value)


def test_corpus_is_well_formed() -> None:
    rows = _rows()
    assert len({r["id"] for r in rows}) == len(rows)
    assert len({(r["reader"], r["text"], r.get("scale")) for r in rows}) == len(rows), "a reply is listed twice"
    sizes = Counter(r["reader"] for r in rows)
    assert all(sizes[reader] >= n for reader, n in MIN_SIZE.items()), sizes
    for r in rows:
        assert r["reader"] in READERS, r
        assert r["category"] in CATEGORIES[r["reader"]], r
        assert r["source"] in SOURCES, r
        assert r["split"] in ("dev", "held-out"), r
        assert (r["reader"] == "score") == ("scale" in r), r
        if r["reader"] == "entailment":
            assert r["label"] in ("entailment", "contradiction", "neutral", "refuse"), r
        elif r["reader"] == "score":
            assert r["label"] in ("1", "2", "3", "4", "5", "refuse"), r
    sources = Counter((r["reader"], r["source"]) for r in rows)
    assert sources["entailment", "embedded-model"] >= 50 and sources["statement", "embedded-model"] >= 50


def test_no_flips_no_over_reads_and_accuracy_per_reader() -> None:
    check_corpus(_rows(), read, MIN_ACCURACY, MIN_CATEGORY_ACCURACY)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The premise entails the hypothesis.", "entailment"),  # the embedded model's usual answer
        ("It is not a contradiction, it is entailment.", "entailment"),
        ("The premise is not entailment, contradiction, or neutral.", "refuse"),
        ("The premise is entailment, contradiction, or neutral.", "refuse"),
        ("Entailment. The hypothesis contradicts the premise.", "refuse"),
        ("The hypothesis entails the premise.", "refuse"),
        ("Entailment is false.", "refuse"),
        ("The premise fails to entail the hypothesis.", "refuse"),
        ("Hardly a contradiction.", "refuse"),
        ("entailment: no\ncontradiction: yes", "contradiction"),
        ("Although it looks like entailment, it is neutral.", "neutral"),
        ("The premise entails the hypothesis only if Oak Island is in Nova Scotia.", "refuse"),
    ],
)
def test_clause_readings(text: str, expected: str) -> None:
    assert read({"reader": "entailment", "text": text}) == expected


LONG_REPLIES = {
    "entailment": {
        "labels": "entailment contradiction neutral ",
        "negated-lists": "it is not entailment, contradiction, or neutral, ",
        "clauses": "The premise does not entail the hypothesis, but it is not a contradiction; ",
        "conditions": "entailment if x ",
        "contrasts": "entailment, but neutral ",
        "negations": "not ",
        "commas": ",",
        "values": "entailment: no ",
        "premise-lines": "Premise: entailment\n",
    },
    "statement": {"lines": "S: The show is filmed there.\n", "words": "word ", "fields": "A: x\nS: y\nQ: z\n"},
    "score": {"numbers": "3 ", "scale-lines": "1: Very easy\n", "prose": "I would rate it 2. ", "ranges": "1 to "},
    "explanation": {"steps": "1. step [[INFO]]\n", "markers": "No [[INFO]] or ", "instructions": "append [[INFO]] "},
}


@pytest.mark.parametrize(
    ("reader", "text"),
    [(reader, text) for reader, texts in LONG_REPLIES.items() for text in texts.values()],
    ids=[f"{reader}-{name}" for reader, texts in LONG_REPLIES.items() for name in texts],
)
def test_linear_time_on_long_replies(reader: str, text: str) -> None:
    """100,000 characters of adversarial text read in well under a second (no backtracking, bounded look-backs)."""
    reply = (text * (100_000 // len(text) + 1))[:100_000]
    start = time.perf_counter()
    read({"reader": reader, "text": reply, "scale": "difficulty"})
    assert time.perf_counter() - start < 1.0
