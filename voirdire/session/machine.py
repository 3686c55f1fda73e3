"""Declared protocol state machines: which states exist, where a session may start, and which edges it may take.

A protocol declares its machine once (``Protocol.machine``); ``Session.enter`` refuses an undeclared edge, the run
header records the edges so any reader can draw the protocol without importing it, and ``mermaid`` gives the
diagram that ``voirdire show --graph`` prints.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field, model_validator

START = "[*]"  # Mermaid's name for the initial pseudo-state


class UndeclaredTransition(RuntimeError):
    """A protocol tried an edge its machine does not declare: a bug in the protocol, never the user's input."""


class StateMachine(BaseModel):
    """``edges[state]`` lists the states reachable from ``state``; ``initial`` the states a session may start in.
    A state with no outgoing edges is final."""

    model_config = ConfigDict(frozen=True)
    initial: tuple[str, ...]
    edges: dict[str, tuple[str, ...]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _closed(self) -> StateMachine:
        known = set(self.edges) | {t for targets in self.edges.values() for t in targets} | set(self.initial)
        missing = sorted(s for s in known if s not in self.edges)
        if missing:
            raise ValueError(f"states {missing} have no entry in edges (use () for a final state)")
        return self

    @classmethod
    def chain(cls, *states: str) -> StateMachine:
        """A straight line of states, e.g. a protocol with one deterministic step."""
        edges = {a: (b,) for a, b in itertools.pairwise(states)} | {states[-1]: ()}
        return cls(initial=(states[0],), edges=edges)

    @property
    def states(self) -> tuple[str, ...]:
        return tuple(self.edges)

    def allows(self, source: str | None, target: str) -> bool:
        if source is None:
            return target in self.initial
        return target in self.edges.get(source, ())

    def as_record(self) -> dict[str, list[str]]:
        """The edges as the run header stores them, the initial states under ``[*]``."""
        return {START: list(self.initial), **{s: list(t) for s, t in self.edges.items()}}

    @classmethod
    def from_record(cls, record: Mapping[str, Sequence[str]]) -> StateMachine:
        edges = {s: tuple(t) for s, t in record.items() if s != START}
        return cls(initial=tuple(record.get(START, ())), edges=edges)

    def mermaid(self, title: str | None = None) -> str:
        """The machine as a Mermaid ``stateDiagram-v2``."""
        lines = ["stateDiagram-v2"]
        if title:
            lines.insert(0, f"---\ntitle: {title}\n---")
        lines += [f"    {START} --> {s}" for s in self.initial]
        for source, targets in self.edges.items():
            lines += [f"    {source} --> {t}" for t in targets]
            if not targets:
                lines.append(f"    {source} --> {START}")
        return "\n".join(lines)
