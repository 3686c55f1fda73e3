"""The worked examples a paper prints with its models' replies, as data: one YAML file per example.

A protocol package keeps its paper's examples in a folder (``Registration.examples``); ``voirdire reproduce
paper-examples`` replays each through the real protocol with scripted models (``voirdire.analysis.examples``). A
file names the example and where the paper prints it, the protocol and its parameters, the item, the paper's
conclusion in its words and what voirdire's verdict says when it reads the paper as the paper does (``expect``),
the stages the paper's dialogue goes through, and each role's replies in order. A reply the paper prints is
verbatim; one it leaves out (LMvLM's Stage 2 Yes/No, "For brevity, prompts are not shown") is marked
``printed: false`` with the reason it is implied. ``default`` answers every further call of a role the paper
prints nothing for, and says so.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from voirdire.base import VoirdireError, read_text


class ExampleError(VoirdireError, ValueError):
    """A paper example file that cannot be read: the file and what is wrong with it."""


class ExampleReply(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str
    printed: bool = True
    why: str = Field("", description="where a reply the paper does not print comes from")


class PaperExample(BaseModel):
    """One worked example of a paper, replayed through its protocol."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    protocol: str
    paper: str
    where: str = Field(description="the table, figure or appendix that prints it")
    models: str = Field("", description="the models whose replies the paper prints")
    params: dict[str, Any] = Field(default_factory=dict)
    item: dict[str, Any]
    conclusion: str = Field(description="the paper's conclusion, in the paper's words")
    expect: dict[str, Any] = Field(
        description="the verdict's fields (dotted paths: decision, statistics.cell) as they read when voirdire takes "
        "the paper's conclusion as the paper does"
    )
    stages: list[str] = Field(description="the states the paper's dialogue goes through, in order")
    follows: dict[str, Any] = Field(
        default_factory=dict,
        description="more of the dialogue's shape as the verdict records it (statistics.examinations.0."
        "questions_per_iteration: the questions of each examiner turn)",
    )
    replies: dict[str, list[ExampleReply]]
    default: dict[str, str] = Field(default_factory=dict, description="a role's reply to calls the paper never shows")
    note: str = Field("", description="what a reader needs to know to read the row")
    path: Path | None = Field(None, exclude=True)

    @property
    def unprinted(self) -> int:
        return sum(not r.printed for replies in self.replies.values() for r in replies)


def _natural(path: Path) -> list[Any]:
    """File names in reading order: table-9 before table-10."""
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", path.name)]


def load_examples(folder: Path) -> list[PaperExample]:
    """Every ``*.yaml`` example in ``folder``, by file name; a file that does not fit is a one-line error."""
    out = []
    for path in sorted(folder.glob("*.yaml"), key=_natural):
        try:
            data = yaml.safe_load(read_text(path, "paper example", ExampleError))
            example = PaperExample.model_validate(data)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f":{mark.line + 1}" if mark is not None else ""
            raise ExampleError(f"{path}{where}: not YAML ({getattr(exc, 'problem', None) or exc})") from None
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            loc = ".".join(str(p) for p in first["loc"]) or "example"
            raise ExampleError(f"{path}: {loc}: {first['msg']}") from None
        out.append(example.model_copy(update={"path": path}))
    return out
