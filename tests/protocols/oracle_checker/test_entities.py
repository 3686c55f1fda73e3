from __future__ import annotations

import pytest

from voirdire.protocols.oracle_checker.entities import (
    Entity,
    UnreadableList,
    distance_to_linear,
    homomorphisms,
    linearity_test,
    most_frequent,
    named_by_rule,
    observe,
    parse_entities,
    parse_named,
    replace,
    vote_synonym,
    xnor,
    xor,
)


def test_parse_prompt_1_list() -> None:
    got = parse_entities('Here:\n"1. movie: Wizard of Oz\n2. animal: tiger"')
    assert got == [Entity(text="Wizard of Oz", cls="movie"), Entity(text="tiger", cls="animal")]
    with pytest.raises(UnreadableList):
        parse_entities("I cannot help with that.")
    assert parse_entities("There are no entities.") == []


def test_most_frequent_set_and_con_o() -> None:
    a, b = [Entity(text="Paris")], [Entity(text="Paris"), Entity(text="dog")]
    chosen, con = most_frequent([a, b, b, None])
    assert chosen == b and con == 2
    assert most_frequent([None]) == (None, 0)


def test_rules_of_app_a2() -> None:
    assert named_by_rule(Entity(text="my teacher", cls="person"))[0] is False
    assert named_by_rule(Entity(text="Aaron", cls="person"))[0] is True
    assert named_by_rule(Entity(text="1998", cls="date"))[0] is True
    assert named_by_rule(Entity(text="the Senate bill", cls="law"))[0] is None
    assert parse_named("A place. [[named entity]]") is True
    assert parse_named("[[normal entity]]") is False


def test_synonym_vote_skips_the_entity_and_the_sentence() -> None:
    lists = [["Paris", "Berlin", "Rome"], ["Rome", "Berlin"], ["Berlin"]]
    assert vote_synonym(lists, "Paris", "Paris and Rome", set()) == "Berlin"
    assert vote_synonym([None], "Paris", "Paris", set()) is None


def test_replacement_r() -> None:
    s = "Barack Obama met Obama's dog."
    assert replace(s, ["Barack Obama", "dog"], ["John Smith", "hound"], (1, 0)) == "John Smith met Obama's dog."
    assert replace(s, ["Barack Obama", "dog"], ["John Smith", "hound"], (1, 1)) == "John Smith met Obama's hound."
    assert replace("The theme of the other", ["the"], ["a"], (1,)) == "a theme of a other"


def test_group_elements_and_equation() -> None:
    names, syns = ["A", "B"], ["X", "Y"]
    assert observe([Entity(text="A"), Entity(text="Y")], names, syns) == (1, 0)
    assert observe([Entity(text="A")], names, syns) == (1, None)
    # the ideal f(v) = complement(v) is a homomorphism
    x, y = (1, 0), (1, 1)
    ideal = {v: tuple(1 - b for b in v) for v in [x, y, xor(x, y)]}
    assert ideal[xor(x, y)] == xnor(ideal[x], ideal[y])
    r = linearity_test(x, y, {"x": [ideal[x]] * 2, "y": [ideal[y], None], "x+y": [ideal[xor(x, y)]]}, {}, {})
    assert r.passed and r.combinations == 4 and r.passing == 2


def test_distance_by_enumeration() -> None:
    assert len(homomorphisms(2)) == 16
    ideal = {(a, b): (1 - a, 1 - b) for a in (0, 1) for b in (0, 1)}
    assert distance_to_linear(ideal) == 0
    broken = dict(ideal) | {(1, 1): None}
    assert distance_to_linear(broken) == 0.25
