"""One front end for every reader (voirdire.replies.lexicon): the same tokens, sentences, clauses, negations,
hedges, answer words and restated questions, whichever reader asks."""

from __future__ import annotations

import pytest

from voirdire.replies import Labels, ParseError, Polar, lexicon as lx, read_label, read_polar, read_yes_no

VERDICT = Polar(("correct",), ("incorrect",), ("claim",))
NLI = Labels(
    names=("entailment", "contradiction", "neutral"),
    forms=(
        ("entailment", "entailment", "noun"),
        ("contradiction", "contradiction", "noun"),
        ("neutral", "neutral", "noun"),
    ),
)


def _or_refuse(read, text: str) -> str:  # type: ignore[no-untyped-def]
    try:
        return str(read(text))
    except ParseError:
        return "refuse"


@pytest.mark.parametrize(
    ("text", "polar", "label"),
    [
        # A restated question answered right away, for a verdict pair and for a choice of labels alike.
        ("Correct? No.", "incorrect", None),
        ("Is the claim correct? Yes.", "correct", None),
        ("Contradiction? Yes.", None, "contradiction"),
        ("Is it entailment? No, it is neutral.", None, "neutral"),
        ("Neutral? No.", None, "refuse"),  # two labels are left
        ("Is it entailment? Absolutely not. It is a contradiction.", None, "contradiction"),
        ("Is it entailment? Maybe.", None, "refuse"),
        # Negations spelled in several words and litotes.
        ("The claim is by no means correct.", "incorrect", None),
        ("The claim is not incorrect.", "correct", None),
        ("It is neutral rather than a contradiction.", None, "neutral"),
        ("This is far from a contradiction; it is entailment.", None, "entailment"),
        # A reply that doubts itself leaves its sentence open, unless a contrast overrides the doubt.
        ("The claim is correct, though I am not certain.", "refuse", None),
        ("It is entailment, though I am not certain.", None, "refuse"),
        ("Entailment, but I am unsure.", None, "refuse"),
        ("I am not sure, but I think it is neutral.", None, "neutral"),
        ("I am not sure, but I think the claim is correct.", "correct", None),
        # A negated verb of knowing withholds the verdict.
        ("I cannot confirm that the claim is correct.", "refuse", None),
        ("I cannot tell whether it is entailment.", None, "refuse"),
    ],
)
def test_one_front_end(text: str, polar: str | None, label: str | None) -> None:
    if polar is not None:
        assert _or_refuse(lambda t: read_polar(t, VERDICT), text) == polar
    if label is not None:
        assert _or_refuse(lambda t: read_label(t, NLI), text) == label


@pytest.mark.parametrize(
    ("text", "expected"),
    [("Absolutely not.", "no"), ("No doubt.", "yes"), ("No doubt they differ.", "refuse"), ("Of course not", "no")],
)
def test_answer_words(text: str, expected: str) -> None:
    assert _or_refuse(read_yes_no, text) == expected


def test_front_end_pieces() -> None:
    toks = lx.tokens("Yes, it isn't non-entailment: by no means!", {"entailment": "<e>"})
    assert toks == ["yes", ",", "it", "is", "not", "not", "<e>", ":", "not", "!", "\n"]
    said = lx.sentences(toks)
    assert [s.tokens for s in said] == [["yes"], ["it", "is", "not", "not", "<e>", ":", "not"]]
    assert lx.clauses(said[1].tokens, frozenset(), frozenset()) == [(0, 5), (6, 7)]
    assert lx.negations(["i", "do", "not", "think", "it", "is", "not"]) == 2
    assert lx.negations(["neither", "a", "nor"]) == 1
    assert lx.withheld(["i", "can", "not", "confirm", "that"])
    assert not lx.withheld(["i", "would", "not", "say", "that"])  # gives the opposite verdict instead
    assert lx.concludes(["therefore", "it"]) and not lx.concludes(["the", "overall", "answer"])
