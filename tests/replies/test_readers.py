"""The core reader of closed answers (voirdire.replies), on its own words: shapes, languages, negated labels,
restated questions, emphatic forms, and the vocabularies a caller brings."""

from __future__ import annotations

import pytest

from voirdire.replies import Labels, ParseError, Polar, read_label, read_number, read_polar, read_yes_no
from voirdire.replies.language import foreign
from voirdire.replies.shape import shaped

VERDICT = Polar(("correct",), ("incorrect",), ("claim", "statement"))
SAME = Polar(("equivalent", "paraphrases"), ("different", "differ"), ("sentences", "they"))
NLI = Labels(
    names=("entailment", "contradiction", "neutral"),
    forms=(
        ("entailment", "entailment", "noun"),
        ("entails", "entailment", "verb"),
        ("entailed", "entailment", "passive"),
        ("contradiction", "contradiction", "noun"),
        ("contradicts", "contradiction", "symmetric"),
        ("neutral", "neutral", "noun"),
    ),
    source=("premise",),
    target=("hypothesis",),
    echo_fields=("premise", "hypothesis"),
)
SCALE = {1: "Very easy", 2: "Easy", 3: "Neither easy nor hard", 4: "Hard", 5: "Very hard"}


def _or_refuse(read, text: str) -> str:  # type: ignore[no-untyped-def]
    try:
        return str(read(text))
    except ParseError:
        return "refuse"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Certainly not.", "no"),
        ("Of course not.", "no"),
        ("Absolutely not.", "no"),
        ("By no means.", "no"),
        ("There is no doubt that my claim is correct.", "yes"),
        ("No doubt about it.", "yes"),
        ("No doubt about it: I am sure.", "yes"),
        ("Yes and no.", "refuse"),
        ("Yes? No.", "refuse"),
        ('{"answer": "Yes and no"}', "refuse"),
        ('{"answer": true}', "yes"),
        ("{'answer': 'no'}", "no"),
        ('{"answer": "no", "explanation": "yes, they share words"}', "no"),
        ('{"answer": "no"} Actually, yes.', "yes"),  # a later self-correction supersedes (issue 46)
        ('{"answer": "no"} The sentences differ, yes.', "refuse"),
        ('{"answer": "yes"}\n{"answer": "no"}', "refuse"),
        ('{"answer": "no", "explanation": "The second', "no"),
        ("Oui.", "refuse"),
        ("Nein, keine Fragen.", "refuse"),
        ("No, no tengo más preguntas.", "refuse"),
    ],
)
def test_yes_no(text: str, expected: str) -> None:
    assert _or_refuse(read_yes_no, text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("They are not paraphrases.", "no"),
        ("No doubt they differ.", "no"),
        ("No doubt about it: the two sentences say the same thing.", "yes"),
        ("Not equivalent: the second adds a date.", "no"),
        ("They are equivalent.", "yes"),
        ("Yes. Both describe one event, although the wording differs.", "yes"),
        ("I cannot tell.", "refuse"),
    ],
)
def test_yes_no_reads_what_is_said_of_the_subject_when_no_answer_word_does(text: str, expected: str) -> None:
    assert _or_refuse(lambda t: read_yes_no(t, SAME), text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("There is no doubt the claim is correct.", "correct"),
        ("Not only is the claim correct, the answers were consistent.", "correct"),
        ("I cannot confirm that the claim is correct.", "refuse"),
        ("It is impossible to say whether the claim is correct.", "refuse"),
        ("Although one answer was incorrect, the claim is correct.", "correct"),
        ("The claim is certainly not correct.", "incorrect"),
        ("Is the claim correct or incorrect? The claim is incorrect.", "incorrect"),
        ("The claim is not incorrect.", "correct"),
        ("Correct? No.", "incorrect"),
        ("Correct? Yes.", "correct"),
        ("Is the claim incorrect? No.", "correct"),
        ("Is the claim correct? Absolutely not.", "incorrect"),
        ("Incorrect is not how I would describe this claim; it is accurate.", "correct"),
        ("Correct is the last word I would use for this claim.", "refuse"),
        ("Correct is my answer.", "correct"),
        ("Not incorrect, but not entirely correct either.", "refuse"),
        ('```json\n{"answer": "incorrect"}\n```', "incorrect"),
        ('{"verdict": "not correct"}', "incorrect"),
        ('"Incorrect"', "incorrect"),
        ("L'affirmation est incorrecte.", "refuse"),
        ("Your answer gives no information regarding incorrect claims.", "refuse"),
        ("I'm not convinced the claim is correct.", "refuse"),
        ("I would hesitate to call the claim correct.", "refuse"),
        ("The claim is probably incorrect, though I am not certain.", "refuse"),
        ("I'm not sure why you ask, but the claim is incorrect.", "incorrect"),
    ],
)
def test_polar(text: str, expected: str) -> None:
    assert _or_refuse(lambda t: read_polar(t, VERDICT), text) == expected


def test_polar_reads_the_callers_words() -> None:
    sure = Polar(("true", "accurate"), ("false", "inaccurate"), ("report",))
    assert read_polar("The report is accurate.", sure) == "true"
    assert read_polar("I would not call the report false.", sure) == "true"
    assert read_polar("The report is not true.", sure) == "false"
    with pytest.raises(ParseError):
        read_polar("The claim is correct.", sure)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The premise entails the hypothesis.", "entailment"),
        ("It is not a contradiction, it is entailment.", "entailment"),
        ("The premise is not entailment, contradiction, or neutral.", "refuse"),
        ("The premise is entailment, contradiction, or neutral.", "refuse"),
        ("Entailment. The hypothesis contradicts the premise.", "refuse"),
        ("The hypothesis entails the premise.", "refuse"),
        ("The premise is entailed by the hypothesis.", "refuse"),
        ("Entailment is false.", "refuse"),
        ("Neutral, rather than entailment.", "neutral"),
        ("entailment: no\ncontradiction: yes", "contradiction"),
        ("Although it looks like entailment, it is neutral.", "neutral"),
        ("The premise entails the hypothesis only if Oak Island is in Nova Scotia.", "refuse"),
        ("Neither entailment nor contradiction.", "neutral"),
        ("non-entailment", "refuse"),
        ("Contradiction is not how I would describe it; it is neutral.", "neutral"),
        ("Premise: it entails\nHypothesis: x\nAnswer: contradiction", "contradiction"),
        ('{"label": "entailment or neutral"}', "refuse"),
        ('```json\n{"label": "neutral"}\n```', "neutral"),
        ("Ce n'est pas une contradiction.", "refuse"),
        ("Es una contradicción.", "refuse"),
    ],
)
def test_label(text: str, expected: str) -> None:
    assert _or_refuse(lambda t: read_label(t, NLI), text) == expected


def test_a_choice_of_two_labels_ruled_down_to_one() -> None:
    pair = Labels(names=("named", "normal"), forms=(("named", "named", "noun"), ("normal", "normal", "noun")))
    assert read_label("Named.", pair) == "named"
    assert read_label("It is not named.", pair) == "normal"
    assert _or_refuse(lambda t: read_label(t, pair), "named or normal") == "refuse"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("4", "4"),
        ("Score: 3/5", "3"),
        ("2 - Easy", "2"),
        ("4: Very easy", "refuse"),
        ("3 or 4", "refuse"),
        ('{"score": 4}', "4"),
        ('{"rating": "2"}', "2"),
        ('{"score": [3, 4]}', "refuse"),
        ('{"score": 7}', "refuse"),
        ('{"score": 4}\nOn reflection, 2.', "2"),  # a later self-correction supersedes (issue 46)
        ('{"score": 4}\nI would also accept 2.', "refuse"),
        ("5 (completely right)", "refuse"),
        ("Je donne la note 3.", "refuse"),
        ("Punteggio: 3", "refuse"),
    ],
)
def test_number(text: str, expected: str) -> None:
    other = {5: "Completely right", 4: "Mostly right", 3: "Neither", 2: "Mostly wrong", 1: "Completely wrong"}
    assert _or_refuse(lambda t: read_number(t, 1, 5, SCALE, (other,)), text) == expected


def test_shape_and_language_helpers() -> None:
    assert shaped('{"answer": "no"} then yes').answers == ["no"]
    assert shaped('{"score": [1, 2]}').several
    assert shaped("plain words").answers == []
    assert foreign("Die Antwort ist neutral.") and foreign("Oui.")
    assert not foreign("The claim is correct.") and not foreign("I'd say no.") and not foreign("")


LONG = {
    "verdicts": "correct ",
    "negations": "not ",
    "quote-marks": '"',
    "complements": "the claim that ",
    "yes-no": "yes no ",
    "questions": "Is it correct? No. ",
    "braces": "{",
    "objects": '{"answer": "yes"} ',
    "open-object": '{"answer": "',
    "fences": "```",
    "labels": "entailment contradiction neutral ",
    "negated-lists": "it is not entailment, contradiction, or neutral, ",
    "values": "entailment: no ",
    "echo-lines": "Premise: entailment\n",
    "numbers": "3 ",
    "scale-lines": "1: Very easy\n",
    "foreign": "Ce n'est pas une ",
}


@pytest.mark.parametrize("unit", LONG.values(), ids=LONG.keys())
def test_every_reader_answers_or_refuses_long_replies(unit: str) -> None:
    """100,000 characters of one unit repeated: each reader answers or refuses, nothing else raised. That it does
    so in time linear in the reply's length is measured by bench/reply_readers_linear.py (no clock in the suite)."""
    reply = (unit * (100_000 // len(unit) + 1))[:100_000]
    for read in (
        read_yes_no,
        lambda t: read_yes_no(t, SAME),
        lambda t: read_polar(t, VERDICT),
        lambda t: read_label(t, NLI),
        lambda t: read_number(t, 1, 5, SCALE),
    ):
        assert _or_refuse(read, reply)
