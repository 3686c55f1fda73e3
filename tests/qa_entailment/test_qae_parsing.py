"""Strict reply parsers: malformed model replies give typed failures, never a default."""

from __future__ import annotations

import pytest

from voirdire.protocols.qa_entailment.parsing import ParseFailure, parse_entailment, parse_score, parse_statement


@pytest.mark.parametrize(
    ("reply", "label"),
    [
        ("entailment", "entailment"),
        ("Entailment.", "entailment"),
        ('"neutral"', "neutral"),
        ("**Contradiction**", "contradiction"),
        ("Answer: neutral", "neutral"),
        ("The answer is entailment.", "entailment"),
        ("  contradiction\n\nThe premise says otherwise.", "contradiction"),
        ("entailment\nBecause it is an entailment of S1.", "entailment"),
    ],
)
def test_parse_entailment_accepts_a_single_label(reply: str, label: str) -> None:
    assert parse_entailment(reply) == label


@pytest.mark.parametrize(
    "reply",
    [
        "not entailment",
        "Not entailment.",
        "no entailment",
        "entailment or neutral",
        "Is it entailment, contradiction, or neutral?",
        "neutral, leaning entailment",
        "Entailment (mostly)",
        "I think entailment",
        "entails",
        "",
        "   \n  ",
        "entailment\nActually, it is neutral.",
    ],
)
def test_parse_entailment_rejects_anything_else(reply: str) -> None:
    result = parse_entailment(reply)
    assert isinstance(result, ParseFailure)
    assert result.parser == "entailment" and result.raw == reply and result.reason


@pytest.mark.parametrize(
    ("reply", "statement"),
    [
        ("Cyrus wrote the first declaration of human rights", "Cyrus wrote the first declaration of human rights"),
        ("S: The TV show is filmed on Oak Island.", "The TV show is filmed on Oak Island."),
        ('"Iron is best absorbed in the small intestine."', "Iron is best absorbed in the small intestine."),
        ("X is Y.\n\nQ: who is z\nA: w\nS: w is z", "X is Y."),  # the model continued the few-shot pattern
    ],
)
def test_parse_statement(reply: str, statement: str) -> None:
    assert parse_statement(reply) == statement


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "S:",
        "Q: where is it filmed",
        "Where is the show filmed?",
        "The show is filmed there.\nI hope this helps!",
        # Two candidate statements (a reply of the embedded SmolLM2-135M): not a continuation of the pattern.
        "W.C.R.E.\nS: The first Nobel Prize in Physics was awarded to Wilhelm Conrad Röntgen.",
        "It is filmed there.\nA: Oak Island",
    ],
)
def test_parse_statement_failures(reply: str) -> None:
    result = parse_statement(reply)
    assert isinstance(result, ParseFailure) and result.parser == "statement"


@pytest.mark.parametrize(("reply", "value"), [("4", 4), ("1.", 1), ("Score: 5", 5), ("3/5", 3), ("**2**", 2)])
def test_parse_score(reply: str, value: int) -> None:
    assert parse_score(reply) == value


@pytest.mark.parametrize("reply", ["", "6", "0", "3 or 4", "four", "It is a 3", "3\n4"])
def test_parse_score_failures(reply: str) -> None:
    result = parse_score(reply)
    assert isinstance(result, ParseFailure) and result.parser == "score"
