"""The strict reply parsers of LMvLM (§2): no substring traps."""

from __future__ import annotations

import pytest

from voirdire.protocol import ParseError
from voirdire.protocols.cross_examination.parsing import (
    fill_blank,
    is_cloze,
    parse_decision,
    parse_yes_no,
    says_idk,
    split_questions,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The claim is correct.", "correct"),
        ("Based on the available information, the claim is incorrect.", "incorrect"),
        ("INCORRECT", "incorrect"),
        ("The claim is not correct.", "incorrect"),
        ("You asked whether it is correct or incorrect: I conclude it is incorrect.", "incorrect"),
        ("Regarding the correctness of the claim, it is correct.", "correct"),
        ("The claim isn't correct.", "incorrect"),
        ("The claim is not entirely correct.", "incorrect"),
        ("The claim does not seem correct.", "incorrect"),
        ("It is unlikely that the claim is correct.", "incorrect"),
        ("The claim cannot be verified as correct.", "incorrect"),
        ("The claim is incorrect. The correct answer is Paris.", "incorrect"),
        ("The claim appears to be correct, although one of the answers was incorrect.", "correct"),
    ],
)
def test_decision(text: str, expected: str) -> None:
    assert parse_decision(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "It is false.",
        "I am not sure.",
        "Part of it is correct, part is incorrect.",
        "correctly stated",
        "",
        "The claim is not incorrect.",
    ],
)
def test_decision_inconclusive(text: str) -> None:
    with pytest.raises(ParseError):
        parse_decision(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Yes", True),
        ("No.", False),
        ("**Yes**, I have two.", True),
        ("no, none", False),
        ("I would say yes to that", True),
        ("Not really. No.", False),
    ],
)
def test_yes_no(text: str, expected: bool) -> None:
    assert parse_yes_no(text) is expected


@pytest.mark.parametrize(
    "text", ["Maybe", "Yes and no", "", "Nothing more", "There is no doubt that my claim is correct."]
)
def test_yes_no_failures(text: str) -> None:
    with pytest.raises(ParseError):
        parse_yes_no(text)


def test_split_questions_numbered_bulleted_and_inline() -> None:
    assert split_questions("Here are my questions:\n1. Who?\n2) When was it?\n") == ["Who?", "When was it?"]
    assert split_questions("- Is it big?\n- Where is it?") == ["Is it big?", "Where is it?"]
    assert split_questions("Who built it? And when did they finish?") == ["Who built it?", "And when did they finish?"]
    assert split_questions("To verify this, I would ask: Who built it?") == ["Who built it?"]
    assert split_questions("Question 1: Who?\nQuestion 2: When?\n  a) Where?") == ["Who?", "When?", "Where?"]
    with pytest.raises(ParseError):
        split_questions("I have no questions.")


def test_idk_and_cloze() -> None:
    assert says_idk("I don't know.") and says_idk("I do not know") and says_idk("i dont know")
    assert not says_idk("I know that it is Paris.") and not says_idk("I don't know for sure, but it is Paris.")
    assert says_idk("I don't know the answer.")
    assert is_cloze("Bailey Peninsula is located in ____.") and not is_cloze("Where is it?")
    assert fill_blank("X is located in ____.", "Antarctica.") == "X is located in Antarctica."
    assert fill_blank("X plays ____ music.", "Jazz music.") == "X plays Jazz music."
    assert (
        fill_blank("Bailey Peninsula is located in ____.", "Bailey Peninsula is located in Antarctica.")
        == "Bailey Peninsula is located in Antarctica."
    )
