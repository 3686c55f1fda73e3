"""A protocol's declared call budget: how many model calls one item can take, role by role.

A protocol declares its budget next to its state machine (``CallBudget``, given to its ``Registration``): a function
of the protocol (its parameters) and one item that returns, for every role a model plays, the calls it makes and the
replies they draw (``RoleCalls``). Where the machine and the parameters bound a role's calls (DCR's rounds, LMvLM's
follow-up cap) the figure is an upper bound; where they do not (how many questions an examiner asks in a turn) it is
an estimate, and ``assumption`` says what it assumes. ``voirdire.certificate.estimate`` adds the items up and prices
them before a run (``--estimate``); the tests hold every scripted run to its declared bound.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class RoleCalls(BaseModel):
    """One role's model calls for one item: ``calls`` asks, drawing ``samples`` replies in all (a call that votes
    over k samples draws k; each reply is at most one request). ``bounded``: the figure is an upper bound the
    parameters guarantee; otherwise an estimate, its ``reasons`` saying what it assumes. ``reasons`` say how each
    part is counted (distinct parts, in order: adding two items' calls keeps one copy of a reason they share)."""

    model_config = ConfigDict(frozen=True)
    calls: int = Field(ge=0)
    samples: int = Field(ge=0)
    bounded: bool = True
    reasons: tuple[str, ...] = ()

    @classmethod
    def of(cls, calls: int, *, samples_per_call: int = 1, bounded: bool = True, why: str = "") -> RoleCalls:
        return cls(calls=calls, samples=calls * samples_per_call, bounded=bounded, reasons=(why,) if why else ())

    @property
    def why(self) -> str:
        return "; ".join(self.reasons)

    def plus(self, other: RoleCalls) -> RoleCalls:
        return RoleCalls(
            calls=self.calls + other.calls,
            samples=self.samples + other.samples,
            bounded=self.bounded and other.bounded,
            reasons=tuple(dict.fromkeys((*self.reasons, *other.reasons))),
        )


class Budget(BaseModel):
    """Model calls per role for one item (roles played by rules make none and are absent)."""

    model_config = ConfigDict(frozen=True)
    roles: dict[str, RoleCalls] = Field(default_factory=dict)

    @property
    def bounded(self) -> bool:
        """Whether every figure is an upper bound (an empty budget, rules only, is: zero calls)."""
        return all(r.bounded for r in self.roles.values())

    @property
    def calls(self) -> int:
        return sum(r.calls for r in self.roles.values())

    @property
    def samples(self) -> int:
        return sum(r.samples for r in self.roles.values())

    def plus(self, other: Budget) -> Budget:
        roles = dict(self.roles)
        for role, calls in other.roles.items():
            roles[role] = roles[role].plus(calls) if role in roles else calls
        return Budget(roles=roles)


def merged(parts: Mapping[str, list[RoleCalls]]) -> Budget:
    """A budget from each role's parts (the calls of each stage), added up; roles with no calls are left out."""
    roles: dict[str, RoleCalls] = {}
    for role, calls in parts.items():
        total: RoleCalls | None = None
        for part in calls:
            total = part if total is None else total.plus(part)
        if total is not None and (total.calls or not total.bounded):
            roles[role] = total
    return Budget(roles=roles)


@dataclass(frozen=True)
class Assumed:
    """A figure a budget needs that the parameters do not fix (LMvLM's questions per turn): its default and where
    that comes from, and how to read it from a finished session's verdict statistics, so an earlier transcript of
    the same protocol and models can give it instead (``observe``: the values one verdict shows, maybe none)."""

    default: float
    source: str
    observe: Callable[[Mapping[str, Any]], list[float]] | None = None


@dataclass(frozen=True)
class Figure:
    """An assumed figure as used: its value and where it came from (the default's source, or the transcript)."""

    value: float
    source: str

    def count(self) -> int:
        """The figure as a whole number of calls: rounded up, so an estimate does not undercount a fraction."""
        return max(0, math.ceil(self.value - 1e-9))


@dataclass(frozen=True)
class CallBudget:
    """A protocol's budget declaration: ``per_item(protocol, item, figures)`` -> ``Budget``. ``assumed`` names the
    figures it may need (name -> ``Assumed``); ``figures`` holds each as used (from an earlier transcript, else its
    default). ``paper`` says where the bound comes from (section, algorithm)."""

    per_item: Callable[[Any, Any, Mapping[str, Figure]], Budget]
    assumed: Mapping[str, Assumed] = field(default_factory=dict)
    paper: str = ""

    def defaults(self) -> dict[str, Figure]:
        return {name: Figure(a.default, a.source) for name, a in self.assumed.items()}

    def of(self, protocol: Any, item: Any, figures: Mapping[str, Figure] | None = None) -> Budget:
        return self.per_item(protocol, item, {**self.defaults(), **(figures or {})})
