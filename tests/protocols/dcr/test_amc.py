"""Eq. 3 with the α and β of App. A.4, and the AMC reply schema."""

from __future__ import annotations

import pytest

from voirdire.protocols.dcr.amc import (
    UndefinedScore,
    alpha_beta,
    amc_schema,
    as_paragraphs,
    consistency_score,
    raw_score,
)
from voirdire.replies.schema import ReplySchema
from voirdire.session.protocol import ParseError


def test_eq3_without_alpha_beta_is_the_mean_mark_rescaled() -> None:
    assert consistency_score([1, 1, 1]) == 1.0
    assert consistency_score([-1, -1]) == 0.0
    assert consistency_score([1, -1, 1, 1]) == pytest.approx((0.5 + 1) / 2)
    assert raw_score([1, -1, -1]) == pytest.approx(-1 / 3)


def test_app_a4_example() -> None:
    # App. A.4: reasons "The two paragraphs are not consistent." (paragraph level, -1), "This sentence is
    # consistent." (+1), "This sentence is not consistent." (-1): alpha = 1, beta = -1, Eq. 5.
    z = [-1, 1, -1]
    alpha, beta = alpha_beta(z, [False, True, True])
    assert (alpha, beta) == (1, -1)
    assert raw_score(z, alpha, beta) == pytest.approx((-1 + 1 - 1 + 1) / (3 - 1))
    assert consistency_score(z, alpha, beta) == pytest.approx(0.5)


def test_a_positive_paragraph_reason_is_cancelled_too() -> None:
    z = [1, -1, -1]
    alpha, beta = alpha_beta(z, [False, True, True])
    assert (alpha, beta) == (-1, -1)
    assert consistency_score(z, alpha, beta) == 0.0  # only the two negative sentences count


def test_every_reason_sentence_level_gives_alpha_beta_zero() -> None:
    # §4.1 sets alpha = beta = 0: what A.4 gives when every reason is about one sentence.
    assert alpha_beta([1, -1], [True, True]) == (0, 0)


def test_no_sentence_level_reason_leaves_eq3_undefined() -> None:
    alpha, beta = alpha_beta([-1], [False])
    with pytest.raises(UndefinedScore):
        consistency_score([-1], alpha, beta)


def test_marks_are_plus_or_minus_one() -> None:
    with pytest.raises(ValueError):
        raw_score([1, 0])
    with pytest.raises(ValueError):
        alpha_beta([1], [True, False])


def test_sentences_not_evaluated_count_minus_one_in_k() -> None:
    # k is the number of sentences of the candidate (§3.2); a sentence without a reason is one more z = -1
    assert consistency_score([1, 1], not_evaluated=1) == pytest.approx((1 / 3 + 1) / 2)
    assert consistency_score([1], not_evaluated=2) == pytest.approx((-1 / 3 + 1) / 2)
    for z in ([1, 1], [1, -1], [-1, -1], [-1]):  # never raises the score, and 1 is out of reach
        assert consistency_score(z, not_evaluated=1) < consistency_score(z) or consistency_score(z) == 0.0
        assert consistency_score(z, not_evaluated=1) < 1
    with pytest.raises(ValueError):
        raw_score([1], not_evaluated=-1)


def test_amc_schema_holds_the_array_to_k_marks() -> None:
    schema = ReplySchema.of(amc_schema(3))
    ok = schema.validate('{"reason": ["a", "b", "c"], "answer": [1, -1, 1]}')
    assert ok.answer == [1, -1, 1]
    with pytest.raises(ParseError, match="answer"):
        schema.validate('{"reason": ["a", "b"], "answer": [1, -1]}')
    with pytest.raises(ParseError, match="answer"):
        schema.validate('{"reason": ["a", "b", "c"], "answer": [1, 0, 1]}')
    wire = schema.schema["properties"]["answer"]
    assert (wire["minItems"], wire["maxItems"]) == (3, 3)
    open_length = ReplySchema.of(amc_schema(None))
    assert open_length.validate('{"reason": [], "answer": [1]}').answer == [1]


def test_reasons_are_listed_as_the_example_paragraphs() -> None:
    assert as_paragraphs(["It is consistent.", " It is not. "]) == '*"It is consistent.",\n*"It is not."'
