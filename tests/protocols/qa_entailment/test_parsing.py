"""Strict reply parsers: malformed model replies give typed failures, never a default."""

from __future__ import annotations

import pytest

from voirdire.protocols.qa_entailment.parsing import (
    CLOSENESS_SCALE,
    DIFFICULTY_SCALE,
    ParseFailure,
    parse_entailment,
    parse_score,
    parse_statement,
)


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
        # Read since the clause reader (issue 8): an opinion marker and the label's verb form still give one label.
        ("I think entailment", "entailment"),
        ("entails", "entailment"),
    ],
)
def test_parse_entailment_accepts_a_single_label(reply: str, label: str) -> None:
    assert parse_entailment(reply) == label


@pytest.mark.parametrize(
    ("reply", "label"),
    [
        # The label on the first line decides; a negated label word in the explanation names no other label.
        ("Entailment\nThe hypothesis restates the premise (no contradiction).", "entailment"),
        ("entailment\nThere is no contradiction, and it is not neutral.", "entailment"),
        ("Neutral\nS1 says nothing about the year, so there is no entailment.", "neutral"),
        ("contradiction\nIt is not neutral: the dates differ.", "contradiction"),
        # Two labels ruled out and none given leave the third (issue 8; earlier refused as "read past a negation").
        ("Not entailment\n(no contradiction)", "neutral"),
        ("The premise neither entails nor contradicts the hypothesis.", "neutral"),
    ],
)
def test_parse_entailment_ignores_negated_labels_in_later_lines(reply: str, label: str) -> None:
    assert parse_entailment(reply) == label


@pytest.mark.parametrize(
    "reply",
    [
        "Entailment\nIt is not entailment.",  # negates its own label
        "entailment\nno, neutral",  # "no," is an answer, not a negation of "neutral"
        "neutral\nnot a clear entailment",  # a hedge, not a plain negation
        "Not entailment\n(no contradiction)\nI am not sure.",  # ruled out two labels, but unsure
    ],
)
def test_parse_entailment_still_rejects_conflicts_after_negations(reply: str) -> None:
    assert isinstance(parse_entailment(reply), ParseFailure)


def test_a_later_self_correction_gives_the_label() -> None:
    assert parse_entailment("entailment\nActually, it is neutral.") == "neutral"  # issue 46: the last conclusion


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
        "It might be entailment",
        "The hypothesis entails the premise.",  # the wrong way round
        "",
        "   \n  ",
        "entailment\nActually, wait, I need to check the dates.",  # a self-correction that gives no label
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


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("4", 4),
        ("1.", 1),
        ("Score: 5", 5),
        ("3/5", 3),
        ("**2**", 2),
        # A score in a sentence (issue 8; "It is a 3" was refused before).
        ("It is a 3", 3),
        ("I would rate it a 2.", 2),
        ("On a scale from 1 to 5, I'd rate it 2.", 2),
        ("The inference takes 2 steps, so I rate it 1.", 1),
        ("I'd give it a 4 out of 5.", 4),
        ("Not a 5, but a 4.", 4),
    ],
)
def test_parse_score(reply: str, value: int) -> None:
    assert parse_score(reply) == value


@pytest.mark.parametrize("reply", ["", "6", "0", "3 or 4", "four", "It is maybe a 3", "3\n4", "-1", "3 of 5 or 4"])
def test_parse_score_failures(reply: str) -> None:
    result = parse_score(reply)
    assert isinstance(result, ParseFailure) and result.parser == "score"


@pytest.mark.parametrize(
    ("reply", "scale", "value"),
    [
        # The model echoing its number's line of the Table 17 scale.
        ("1: Very easy", DIFFICULTY_SCALE, 1),
        ("Rating: 2 - Easy", DIFFICULTY_SCALE, 2),
        ("Rating: 2 – Easy", DIFFICULTY_SCALE, 2),
        ("3 (Neither easy nor hard)", DIFFICULTY_SCALE, 3),
        ("**4**: Hard.", DIFFICULTY_SCALE, 4),
        ("5 (completely right)", CLOSENESS_SCALE, 5),
        ("5: The AI-generated answer is completely right.", CLOSENESS_SCALE, 5),
        ("2 - mostly wrong", CLOSENESS_SCALE, 2),
        ("4 -", DIFFICULTY_SCALE, 4),  # a separator and no label
        ("4\n4", DIFFICULTY_SCALE, 4),  # the same score twice is still one score
        ("4\n5 steps were needed, so it is hard.", DIFFICULTY_SCALE, 4),  # a later number in prose is no score
        # "I think" asserts (issue 8; earlier refused as "more than the label").
        ("2 - Easy, I think", DIFFICULTY_SCALE, 2),
        # The whole scale echoed, then the answer.
        ("1: Very easy\n2: Easy\n3: Neither easy nor hard\n4: Hard\n5: Very hard\n\nAnswer: 2", DIFFICULTY_SCALE, 2),
    ],
)
def test_parse_score_accepts_the_numbers_own_scale_label(reply: str, scale: dict[int, str], value: int) -> None:
    assert parse_score(reply, scale=scale) == value


@pytest.mark.parametrize(
    ("reply", "scale"),
    [
        ("4: Very easy", DIFFICULTY_SCALE),  # the label of another number
        ("5 (completely right)", DIFFICULTY_SCALE),  # the other prompt's label
        ("1: Easy", DIFFICULTY_SCALE),  # "Easy" is 2's label, not 1's
        ("2 - Easy, maybe 3", DIFFICULTY_SCALE),  # a hedge
        ("I rate it 4: Very easy.", DIFFICULTY_SCALE),  # in a sentence, still another number's label
        ("1: Very easy\n2: Easy\n3: Neither easy nor hard\n4: Hard\n5: Very hard", DIFFICULTY_SCALE),  # the scale
        ("Rating: 2 - Easy\n3", DIFFICULTY_SCALE),  # two different numbers
        ("3\n10", DIFFICULTY_SCALE),  # a second number, even out of range
        ("4\n5: Very hard", DIFFICULTY_SCALE),
        ("Rating: Easy", DIFFICULTY_SCALE),  # no number
        ("2: Easy", None),  # without a scale no label is expected
        ("6: Very hard", DIFFICULTY_SCALE),
    ],
)
def test_parse_score_rejects_inconsistent_or_ambiguous_labels(reply: str, scale: dict[int, str] | None) -> None:
    result = parse_score(reply, scale=scale)
    assert isinstance(result, ParseFailure) and result.parser == "score" and result.raw == reply
