"""The one labelled reply corpus (``corpus.jsonl``): no flips, no over-reads, accuracy floors, for every reader.

Each row is a reply to one of the prompts a reader reads (``reader``: the LMvLM verdict and Yes/No answers, the
oracle-checker's paraphrase decisions, the QA entailment label, 1-5 score, QA2D statement and explanation, No-Data's
label and datapoint), labelled by reading it before any reader ran on it: the value a person takes from it, or
``refuse`` when it says both, neither, or nothing in the prompt's terms. ``origin`` says where a row comes from:
the three protocol corpora merged here (``lmvlm``, ``qa``, ``no-data``) and the cases written for the core reader
(``issue-18``). Rows with ``split`` "held-out" were never used to tune a reader. A *flip* is a value other than the
label where neither is a refusal; an *over-read* is a value read from a reply labelled ``refuse``.
``bench/reply_parsers_corpus.py`` prints the numbers per reader.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from tests.replies.readers import read
from tests.reply_corpus import check_corpus

CORPUS = Path(__file__).with_name("corpus.jsonl")
SOURCES = {"written", "embedded-model", "paper"}
ORIGINS = {"lmvlm", "qa", "no-data", "issue-18", "issue-26", "issue-46"}
LABELS: dict[str, set[str] | None] = {
    "decision": {"correct", "incorrect", "refuse"},
    "yes_no": {"yes", "no", "refuse"},
    "paraphrase": {"yes", "no", "refuse"},
    "entailment": {"entailment", "contradiction", "neutral", "refuse"},
    "score": {"1", "2", "3", "4", "5", "refuse"},
    "label": {"0", "1", "refuse"},
    "statement": None,
    "explanation": None,
    "datapoint": None,
}
CATEGORIES = {
    "decision": {
        "attributive", "both", "conditional", "contrast", "double_negation", "echo", "emphatic_negative",
        "emphatic_positive", "foreign_language", "hedge", "json", "modality", "negated_label", "negation_scope",
        "neither", "off_vocabulary", "other_subject", "partial", "plain", "restated_question", "verbose_model_output",
    },
    "yes_no": {
        "both", "double_negation", "echo", "emphatic_negative", "emphatic_positive", "foreign_language",
        "have_questions", "hedge", "json", "negation_scope", "neither", "plain", "restated_question",
        "verbose_model_output",
    },
    "paraphrase": {
        "both", "content", "emphatic_negative", "emphatic_positive", "foreign_language", "json", "neither", "plain",
        "restated_question",
    },
    "entailment": {
        "echo", "elimination", "hedge", "json", "negation", "off_vocabulary", "plain", "several_labels", "verb_form",
        "verbose_model_output",
    },
    "score": {
        "hedge", "mismatched_label", "negation", "no_number", "out_of_range", "plain", "scale_echo", "scale_label",
        "several_numbers", "verbose_model_output",
    },
    "statement": {
        "continuation", "echoed_answer", "echoed_pattern", "empty", "extra_text", "lead_in", "other_field", "plain",
        "prefix", "question", "quotes", "two_candidates", "verbose_model_output",
    },
    "explanation": {
        "epilogue", "markdown", "markers", "no_steps", "numbering", "numbers_in_text", "plain", "preamble",
        "verbose_model_output",
    },
    "label": {
        "continuation", "echoed_exemplars", "echoed_format", "off_format", "plain", "restated_datapoint",
        "several_labels", "unterminated", "verbose_model_output",
    },
    "datapoint": {
        "continuation", "echoed_exemplars", "echoed_format", "not_bits", "off_format", "plain", "restated_datapoint",
        "several_datapoints", "unterminated", "verbose_model_output", "wrong_length",
    },
}  # fmt: skip
# Issue 46: the conclusion a reply ends on (self-corrections, final markers, tags, reasoning blocks, a verdict its
# justification contradicts, a reply cut off before its conclusion, a chain of thought).
LAST_CONCLUSION = {
    "self_correction", "final_marker", "tagged", "think_block", "contradicted", "cut_off", "chain_of_thought",
}  # fmt: skip
for _reader in ("decision", "yes_no", "paraphrase", "entailment", "score", "label"):
    CATEGORIES[_reader] |= LAST_CONCLUSION
# Measured on the corpus (docs/replies.md); a change that reads fewer replies right fails here.
MIN_ACCURACY = {
    "decision": 0.98,
    "yes_no": 0.98,
    "paraphrase": 0.93,
    "entailment": 0.99,
    "score": 0.99,
    "statement": 0.99,
    "explanation": 0.99,
    "label": 0.99,
    "datapoint": 0.99,
}
MIN_CATEGORY_ACCURACY = 0.7
# A verdict word talked about ("Correct is the last word I would use") is refused.
CATEGORY_FLOORS = {("decision", "negated_label"): 0.0}


def _rows() -> list[dict]:
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_corpus_is_well_formed() -> None:
    rows = _rows()
    assert len({r["id"] for r in rows}) == len(rows)
    keys = [(r["reader"], r["text"], r.get("scale"), r.get("x")) for r in rows]
    assert len(set(keys)) == len(rows), "a reply is listed twice"
    for r in rows:
        assert r["reader"] in LABELS, r
        allowed = LABELS[r["reader"]]
        assert allowed is None or r["label"] in allowed, r
        assert r["category"] in CATEGORIES[r["reader"]], r
        assert r["source"] in SOURCES, r
        assert r["origin"] in ORIGINS, r
        assert r["split"] in ("dev", "held-out"), r
        assert (r["reader"] == "score") == ("scale" in r), r
        assert (r["reader"] in ("label", "datapoint")) == ("x" in r), r
    new = [r for r in rows if r["origin"] == "issue-18"]
    assert len(new) >= 150
    assert {r["reader"] for r in new} >= {"decision", "yes_no", "paraphrase", "entailment", "score", "label"}
    assert sum(r["split"] == "held-out" for r in new) >= 50
    sources = Counter(r["source"] for r in rows)
    assert sources["embedded-model"] >= 200 and sources["paper"] >= 10


def test_no_flips_no_over_reads_and_accuracy_per_reader() -> None:
    check_corpus(_rows(), read, MIN_ACCURACY, MIN_CATEGORY_ACCURACY, CATEGORY_FLOORS)


def test_no_flips_no_over_reads_on_the_held_out_part() -> None:
    check_corpus([r for r in _rows() if r["split"] == "held-out"], read, {}, 0.0)


@pytest.mark.parametrize(
    ("reader", "text", "expected"),
    [
        # The replies the issue names, read by the earlier readers as the opposite answer or as an answer at all.
        ("decision", "Incorrect is not how I would describe this claim; it is accurate.", "correct"),
        ("entailment", "Ce n'est pas une contradiction.", "refuse"),
        ("paraphrase", "No doubt about it: the two sentences say the same thing.", "yes"),
        ("paraphrase", '{"answer": "Yes and no"}', "refuse"),
        ("paraphrase", "Absolutely not.", "no"),
        ("decision", "Correct? No.", "incorrect"),
        ("decision", "The claim is not incorrect.", "correct"),
        ("yes_no", "Yes and no.", "refuse"),
        ("yes_no", '```json\n{"answer": "no"}\n```', "no"),
        ("entailment", '"contradiction"', "contradiction"),
        ("score", '{"score": 4}', "4"),
        ("score", '{"score": [3, 4]}', "refuse"),
    ],
)
def test_issue_examples(reader: str, text: str, expected: str) -> None:
    assert read({"reader": reader, "text": text, "scale": "none"}) == expected


@pytest.mark.parametrize(
    ("reader", "text", "expected"),
    [
        # Issue 26: a key is not the answer, its value is; the word about the subject decides; a litotes that
        # withholds the verdict is a refusal; a qualified "Are you sure?" answer is neither Yes nor No; the answer a
        # reply ends on after correcting itself; entailment in other words; a No-Data label named without anchors.
        ("decision", '{"is_correct": false}', "incorrect"),
        ("decision", '{"verdict": {"correct": false, "confidence": 0.9}}', "incorrect"),
        ("decision", '{"verdict": {"label": "correct"}, "is_correct": false}', "refuse"),
        ("paraphrase", '{"equivalent": true, "different": true}', "refuse"),
        ("decision", "The reasoning is correct, but the claim is incorrect.", "incorrect"),
        ("decision", "There is no evidence that it is incorrect, but I cannot call it correct either.", "refuse"),
        ("decision", "Nobody could call the claim correct.", "incorrect"),
        ("yes_no", "Fairly confident, but not 100% sure.", "refuse"),
        ("yes_no", "I think so, though I could be wrong.", "refuse"),
        ("yes_no", "I am not entirely sure.", "no"),
        ("yes_no", "No, wait, I do have one more question. **Final answer: Yes**", "yes"),
        ("entailment", "The hypothesis can be inferred from the premise.", "entailment"),
        ("entailment", "The hypothesis implies the premise, but not the other way round.", "refuse"),
        ("label", '{"label": 0}', "0"),
        ("label", "Label: 1", "1"),
        ("label", "1", "refuse"),
    ],
)
def test_issue_26_examples(reader: str, text: str, expected: str) -> None:
    assert read({"reader": reader, "text": text, "scale": "none", "x": "010011010011"}) == expected


LONG_REPLIES = {
    "decision": 'Although it may not be incorrect, the claim that "X" (which I doubt) is, in my view, not correct; ',
    "yes_no": "yes no ",
    "paraphrase": '{"answer": "yes", "explanation": "x"} no ',
    "entailment": "entailment, but neutral ",
    "score": '{"score": 3} 4 ',
}


@pytest.mark.parametrize(("reader", "unit"), LONG_REPLIES.items(), ids=LONG_REPLIES.keys())
def test_long_replies_are_answered_or_refused(reader: str, unit: str) -> None:
    """100,000 characters of adversarial text: read as a label or refused, nothing raised. That each is read in
    time linear in its length is measured by bench/reply_readers_linear.py (the suite asserts on no clock)."""
    reply = (unit * (100_000 // len(unit) + 1))[:100_000]
    label = read({"reader": reader, "text": reply, "scale": "none"})
    assert isinstance(label, str) and label
