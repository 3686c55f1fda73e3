"""The labelled reply corpus: accuracy per category and verdict flips of the LMvLM reply readers.

``reply_corpus.jsonl`` holds replies to the Stage 3 decision prompt ("correct or incorrect?") and to the Yes/No
prompts (Stage 2 follow-up, the AYS baseline), each labelled by reading it, before any reader ran on it: the
verdict a person takes from it, or ``refuse`` when the reply says both or neither. A *flip* is a reading of the
opposite verdict (correct↔incorrect, yes↔no); a refusal is never a flip. ``bench/reply_parsers.py`` prints the
same table for the earlier keyword readers.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.reply_corpus import check_corpus
from voirdire.protocol import ParseError
from voirdire.protocols.cross_examination.parsing import parse_decision, parse_yes_no, says_idk, split_questions

CORPUS = Path(__file__).with_name("reply_corpus.jsonl")
LABELS = {"decision": {"correct", "incorrect", "refuse"}, "yes_no": {"yes", "no", "refuse"}}
SOURCES = {"written", "embedded-model", "paper"}
CATEGORIES = {
    "plain", "emphatic_negative", "emphatic_positive", "hedge", "negation_scope", "contrast", "echo",
    "restated_question", "double_negation", "verbose_model_output", "both", "neither", "modality", "partial",
    "attributive", "conditional", "off_vocabulary", "have_questions",
}  # fmt: skip
# Measured on the corpus (see docs/cross_examination.md); a change that reads fewer replies right fails here.
MIN_ACCURACY = {"decision": 0.98, "yes_no": 0.97}
MIN_CATEGORY_ACCURACY = 0.75


def _rows() -> list[dict]:
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


def read(reader: str, text: str) -> str:
    """The reader's verdict as a label: the decision, "yes" / "no", or "refuse" for a ParseError."""
    try:
        if reader == "decision":
            return parse_decision(text)
        return "yes" if parse_yes_no(text) else "no"
    except ParseError:
        return "refuse"


def test_corpus_is_well_formed() -> None:
    rows = _rows()
    assert len(rows) >= 300
    assert len({r["id"] for r in rows}) == len(rows)
    assert len({(r["reader"], r["text"]) for r in rows}) == len(rows), "a reply is listed twice"
    for r in rows:
        assert r["label"] in LABELS[r["reader"]], r
        assert r["category"] in CATEGORIES, r
        assert r["source"] in SOURCES, r
        assert r["split"] in ("dev", "held-out"), r
    sources = Counter(r["source"] for r in rows)
    assert sources["embedded-model"] >= 50 and sources["paper"] >= 10


def test_no_flips_no_over_reads_and_accuracy_per_reader() -> None:
    check_corpus(_rows(), lambda r: read(r["reader"], r["text"]), MIN_ACCURACY, MIN_CATEGORY_ACCURACY)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Certainly not.", "no"),
        ("Of course not.", "no"),
        ("Absolutely not.", "no"),
        ("Definitely not.", "no"),
        ("By no means.", "no"),
        ("There is no doubt that my claim is correct.", "yes"),
    ],
)
def test_issue_examples_yes_no(text: str, expected: str) -> None:
    assert read("yes_no", text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("There is no doubt the claim is correct.", "correct"),
        ("Not only is the claim correct, the examinee's answers were consistent.", "correct"),
        ("I cannot confirm that the claim is correct.", "refuse"),
        ("It is impossible to say whether the claim is correct.", "refuse"),
        ("I am unable to determine whether the claim is correct.", "refuse"),
        ("Although one answer was incorrect, the claim is correct.", "correct"),
        ("The claim is certainly not correct.", "incorrect"),
        ("Is the claim correct or incorrect? The claim is incorrect.", "incorrect"),
    ],
)
def test_issue_examples_decision(text: str, expected: str) -> None:
    assert read("decision", text) == expected


LONG_REPLIES = {
    "clauses": "the claim is not correct and " * 3600,
    "verdicts": "correct " * 12500,
    "negations": "not " * 25000 + "correct",
    "quoted-verdicts": '" correct ' * 10000,
    "commas": "correct, " * 11000,
    "quote-marks": '"' * 100_000,
    "complements": "the claim that " * 7000 + "is correct",
    "prepositions": "one of the answers of " * 4500 + "is incorrect",
    "mixed": 'Although it may not be incorrect, the claim that "X" (which I doubt) is, in my view, not correct; '
    * 1000,
    "yes-no": "yes no " * 16000,
    "statements": "I have no further questions " * 3500,
    "colons": "a:" * 50_000,
    "questions": "Is it correct? No. " * 5300,
    "numbered": "1. Who wrote it?\n" * 6000,
    "spaces": "1." + " " * 100_000,
}


@pytest.mark.parametrize("text", LONG_REPLIES.values(), ids=LONG_REPLIES.keys())
def test_linear_time_on_long_replies(text: str) -> None:
    """100,000 characters of adversarial text parse in well under a second (no backtracking, bounded windows)."""
    for reader in ("decision", "yes_no", "questions", "idk"):
        start = time.perf_counter()
        if reader == "questions":
            with contextlib.suppress(ParseError):
                split_questions(text[:100_000])
        elif reader == "idk":
            says_idk(text[:100_000])
        else:
            read(reader, text[:100_000])
        assert time.perf_counter() - start < 1.0, reader
