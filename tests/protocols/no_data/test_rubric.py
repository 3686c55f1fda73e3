"""Rubric model (§5, Table 1, App. C.2)."""

from __future__ import annotations

import itertools

import pytest

from voirdire.protocols.no_data.data import load_split
from voirdire.protocols.no_data.rubric import (
    IP_RUBRIC,
    OOP_RUBRIC,
    Binarised,
    CountAggregator,
    MajorityVote,
    Rubric,
    contains,
    decode_k_ary,
    relevant_subsets,
    starts_with,
    xor,
)

ALL_12 = ["".join(bits) for bits in itertools.product("01", repeat=12)]


def test_total_rubric_decomposes_the_xor():
    # Table 1: the IP rubric has 3 criteria but its total rubric has 5.
    assert [c.name for c in IP_RUBRIC.criteria] == ["c0", "c1", "c2"]
    assert [c.name for c in IP_RUBRIC.total_criteria] == ["c0", "c1a", "c1b", "c1", "c2"]
    assert not IP_RUBRIC.is_total
    assert OOP_RUBRIC.is_total and len(OOP_RUBRIC.total_criteria) == 3


def test_total_evaluation_is_consistent_with_the_rubric():
    for x in ALL_12[::7]:
        names = [c.name for c in IP_RUBRIC.total_criteria]
        total = dict(zip(names, IP_RUBRIC.evaluate_total(x), strict=True))
        assert total["c1"] == total["c1a"] ^ total["c1b"]
        assert (total["c0"], total["c1"], total["c2"]) == IP_RUBRIC.evaluate(x)


def test_ip_criteria_follow_table_1():
    assert IP_RUBRIC.evaluate("011111100000") == (1, 1, 1)  # six ones; starts with 0, no 10101
    assert IP_RUBRIC.evaluate("010101000000") == (0, 0, 0)  # three ones; starts with 0 AND has 10101
    assert IP_RUBRIC.evaluate("110101000000") == (1, 1, 0)  # four ones; 10101 only
    assert OOP_RUBRIC.evaluate("110001000111") == (1, 1, 1)
    assert OOP_RUBRIC.evaluate("000000000000") == (0, 0, 0)


@pytest.mark.parametrize("name", ["ip", "oop"])
@pytest.mark.parametrize("split", ["train", "test"])
def test_rubrics_reproduce_every_stored_label(shared_data, name, split):
    data = load_split(name, split, shared_data / "no_data_algorithm")
    wrong = [row for row in data.rows if data.rubric.label(row.x) != row.y]
    assert not wrong, wrong[:3]


def test_majority_vote_ties_go_to_one():
    sigma = MajorityVote()
    assert sigma((1, 1, 0)) == 1 and sigma((0, 0, 1)) == 0
    assert sigma((1, 0)) == 1 and MajorityVote(tie=0)((1, 0)) == 0


def test_user_defined_nonlinear_criterion_enters_the_total_rubric():
    a, b = starts_with("a", "1"), contains("b", "00")
    rubric = Rubric("toy", (xor("c", "a xor b", a, b),))
    assert [c.name for c in rubric.total_criteria] == ["a", "b", "c"]
    assert rubric.evaluate_total("100") == (1, 1, 0)


def test_relevant_subsets():
    assert relevant_subsets("0101") == ("0101",)
    subs = relevant_subsets("0101", "substrings")
    assert set(subs) == {"0", "1", "01", "10", "010", "101", "0101"}
    with pytest.raises(ValueError, match="S_x mode"):
        relevant_subsets("01", "pairs")  # type: ignore[arg-type]


def test_k_ary_binarisation_and_decoding_round_trip():
    sigma = CountAggregator(3)
    labels = sigma.labels
    assert labels == (0, 1, 2, 3)
    for bits in itertools.product((0, 1), repeat=3):
        truth = sigma(bits)
        binary = [Binarised(sigma, label)(bits) for label in labels[:-1]]
        assert decode_k_ary(binary, labels) == truth
    with pytest.raises(ValueError, match="binary runs"):
        decode_k_ary([0, 1], labels)
