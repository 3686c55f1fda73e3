"""The reply readers of LMvLM (§2): clauses, negation scope and hedges, no substring traps.

The verdict and Yes/No readers are the core reader's (``voirdire.replies``) with LMvLM's words; the one labelled
corpus (``tests/replies/corpus.jsonl``) measures them; the cases here pin the rules one by one."""

from __future__ import annotations

import pytest

from voirdire.protocols.cross_examination.parsing import (
    fill_blank,
    is_cloze,
    parse_decision,
    parse_yes_no,
    says_idk,
    split_questions,
)
from voirdire.session.protocol import ParseError


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
        # double negation: "not incorrect" is correct (litotes), as "no doubt" and "cannot deny" are positive
        ("The claim is not incorrect.", "correct"),
        ("I cannot deny that the claim is correct.", "correct"),
        ("There is no doubt the claim is correct.", "correct"),
        ("Not only is the claim correct, the dates also agree.", "correct"),
        ("The claim is certainly not correct.", "incorrect"),
        ("I do not think the claim is correct.", "incorrect"),
        ("The claim that Paris is not the capital is incorrect.", "incorrect"),
        ("The claim is incorrect. The correct answer is Paris.", "incorrect"),
        ("The claim appears to be correct, although one of the answers was incorrect.", "correct"),
        ("Although one answer was incorrect, the claim is correct.", "correct"),
        ("The claim looks correct, but it is incorrect.", "incorrect"),
        ("Is the claim correct or incorrect? The claim is incorrect.", "incorrect"),
        ("Is the claim correct? No, it is not.", "incorrect"),
        ("Thank you. Step 1: the dates differ.\n\n**Conclusion:** the claim is incorrect.", "incorrect"),
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
        # a hedge withholds the verdict: failing to verify a claim is not finding it incorrect
        "The claim cannot be verified as correct.",
        "I cannot confirm that the claim is correct.",
        "It is impossible to say whether the claim is correct.",
        "The claim may be correct.",
        "The claim is partially correct.",
        "If the answers are right, the claim is correct.",
        "One of the answers was incorrect.",
        "The correct answer is Paris.",
        "Based on the interviewee's answers, what is your conclusion? Do you think it is correct or incorrect?",
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
        ("Certainly not.", False),
        ("Of course not.", False),
        ("Absolutely not!", False),
        ("By no means.", False),
        ("Of course.", True),
        ("I have no further questions.", False),
        ("I have a few more questions.", True),
        ("Do you have any follow-up questions? No.", False),
        # "no doubt" is an emphatic yes to "Are you sure regarding the correctness of your claim?"
        ("There is no doubt that my claim is correct.", True),
        ("I'm not sure.", False),
    ],
)
def test_yes_no(text: str, expected: bool) -> None:
    assert parse_yes_no(text) is expected


@pytest.mark.parametrize(
    "text",
    ["Maybe", "Yes and no", "", "Nothing more", "Yes, I have no further questions.", "Please answer with Yes or No."],
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
    assert says_idk("I don't know the answer.") and says_idk("Sorry, I don't know.")
    assert not says_idk("I don't know, maybe Paris.") and not says_idk("I do not know. It might be Lyon.")
    assert is_cloze("Bailey Peninsula is located in ____.") and not is_cloze("Where is it?")
    assert fill_blank("X is located in ____.", "Antarctica.") == "X is located in Antarctica."
    assert fill_blank("X plays ____ music.", "Jazz music.") == "X plays Jazz music."
    assert (
        fill_blank("Bailey Peninsula is located in ____.", "Bailey Peninsula is located in Antarctica.")
        == "Bailey Peninsula is located in Antarctica."
    )
