"""Declared state machines: the edges a Session may take, their record in the header, their diagram."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from voirdire.session.machine import StateMachine


def test_edges_initial_states_and_final_states() -> None:
    m = StateMachine(initial=("a",), edges={"a": ("b", "c"), "b": ("a",), "c": ()})
    assert m.states == ("a", "b", "c")
    assert m.allows(None, "a") and not m.allows(None, "b")
    assert m.allows("a", "c") and not m.allows("c", "a") and not m.allows("a", "a")


def test_a_state_without_an_entry_is_refused() -> None:
    with pytest.raises(ValidationError, match=r"\['b'\] have no entry"):
        StateMachine(initial=("a",), edges={"a": ("b",)})


def test_record_round_trip_and_mermaid() -> None:
    m = StateMachine.chain("x", "y", "z")
    assert m.as_record() == {"[*]": ["x"], "x": ["y"], "y": ["z"], "z": []}
    assert StateMachine.from_record(m.as_record()) == m
    diagram = m.mermaid(title="t")
    assert "stateDiagram-v2" in diagram and "[*] --> x" in diagram and "y --> z" in diagram and "z --> [*]" in diagram
