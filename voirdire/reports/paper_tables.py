"""What a protocol package declares to reproduce its paper's tables and figures (``voirdire reproduce``).

A ``Reproduction`` names one table or figure, says what it needs (``offline``: data and code only; ``model``: a
model for some role, given with ``--model ROLE=SPEC``; ``gpu``: a model too large for a CPU), and runs it. Running
it gives an ``Outcome``: ``Cell``s, each the paper's printed number beside ours with the difference and the
tolerance the comparison allows, the paper's figure redrawn where it has one (``voirdire.reports.charts``), and notes.
Protocol packages list theirs on their registration (``Registration.reproductions``); the core never names one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from voirdire.base import VoirdireError
from voirdire.reports.charts import Chart

Needs = Literal["offline", "model", "gpu"]


class ReproductionError(VoirdireError, RuntimeError):
    """A reproduction that cannot run as asked (a missing model, missing data, a failed run)."""


@dataclass(frozen=True)
class Cell:
    """One printed number and ours. ``tolerance``: the largest |ours − paper| that counts as reproduced (None: shown,
    not compared, e.g. a row the paper prints for another data set)."""

    label: str
    paper: float | None
    ours: float | None
    tolerance: float | None = None
    note: str = ""

    @property
    def difference(self) -> float | None:
        return None if self.paper is None or self.ours is None else self.ours - self.paper

    @property
    def within(self) -> bool | None:
        d = self.difference
        return None if d is None or self.tolerance is None else abs(d) <= self.tolerance + 1e-9

    def as_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "paper": self.paper,
            "ours": self.ours,
            "difference": self.difference,
            "tolerance": self.tolerance,
            "within": self.within,
            "note": self.note,
        }


@dataclass
class Outcome:
    cells: list[Cell] = field(default_factory=list)
    charts: list[Chart] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    summary: str = ""
    """One line that says how it went, where counting cells within tolerance does not (a bound, two readings)."""


@dataclass(frozen=True)
class Options:
    """What ``voirdire reproduce NAME`` passes on: models per role, and the knobs a reproduction may read."""

    models: Mapping[str, str] = field(default_factory=dict)
    data_dir: Path | None = None
    limit: int | None = None
    seeds: int | None = None
    out: Path | None = None  # a folder for transcripts a model run writes
    command: Callable[[list[str]], str] | None = field(default=None, compare=False)
    """Runs ``voirdire ARGV`` and returns what it printed, raising ``ReproductionError`` when it fails."""


@dataclass(frozen=True)
class Reproduction:
    name: str
    paper: str
    what: str
    needs: Needs
    run: Callable[[Options], Outcome] = field(compare=False)
    tolerance: str = ""
    roles: tuple[str, ...] = ()
    takes: str = ""
    example: str = ""

    @property
    def command(self) -> str:
        return self.example or f"voirdire reproduce {self.name}"


EMBEDDED = "local"  # the embedded model's spec


def model_args(options: Options) -> list[str]:
    """``--model ROLE=SPEC`` flags for a ``voirdire`` command, from the models the user bound (``*``: every role)."""
    return [
        arg for role, spec in options.models.items() for arg in ("--model", spec if role == "*" else f"{role}={spec}")
    ]


def paper_models_note(paper_models: str, options: Options) -> str:
    """What a model reproduction says before its numbers: whose numbers the paper printed, and what ran here."""
    bound = ", ".join(f"{role}={spec}" for role, spec in options.models.items()) or "none"
    note = (
        f"The paper's numbers come from {paper_models}; here: {bound}. They are shown beside ours, not judged: "
        "only the paper's own models (and its full data) could reproduce them."
    )
    if any(spec.split(":", 1)[0] == EMBEDDED for spec in options.models.values()):
        note += (
            " The embedded model (SmolLM2-135M on llama.cpp) cannot stand in for GPT-3.5/4: with it these numbers "
            "measure the pipeline, not the method."
        )
    return note


def run_voirdire(options: Options, argv: list[str]) -> str:
    """Runs a ``voirdire`` command through ``options.command`` (``voirdire reproduce`` passes its own ``main``);
    its standard output."""
    if options.command is None:
        raise ReproductionError("this reproduction runs voirdire commands: run it with `voirdire reproduce`")
    return options.command(argv)
