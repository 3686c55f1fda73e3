"""ItemInputs: one item from command-line fields, or a dataset file; clear errors for neither or both."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from voirdire.registry.inputs import ItemInputs
from voirdire.registry.plugins import InputError
from voirdire.session.machine import StateMachine
from voirdire.session.protocol import Protocol, Session
from voirdire.transcript import Verdict


class Pair(BaseModel):
    id: str | None = None
    s1: str
    s2: str
    tags: list[str] = Field(default_factory=list, description="labels")


class NoParams(BaseModel):
    pass


class Check(Protocol[Pair, NoParams]):
    name = "check"
    roles = ()
    machine = StateMachine.chain("done")
    Item, Params = Pair, NoParams
    prompt_folder = "check"

    def item_id(self, item: Pair) -> str:
        return item.id or ""

    async def run(self, item: Pair, session: Session) -> Verdict:
        session.enter("done")
        return session.verdict("read", accepted=None)


INPUTS = ItemInputs(item=Pair, positional=("s1", "s2"), flags={"tags": "--tag"}, data_flag="--pairs")


def parse(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    INPUTS.add_arguments(p)
    args = p.parse_args(list(argv))
    args.limit, args.offset = None, 0
    return args


def test_one_item_from_positionals_and_a_repeated_flag() -> None:
    inputs = INPUTS.load(parse("a b", "c d", "--tag", "x", "--tag", "y"), Check())
    assert inputs.single and inputs.items == [Pair(s1="a b", s2="c d", tags=["x", "y"])]


def test_a_dataset_file(tmp_path: Path) -> None:
    data = tmp_path / "pairs.jsonl"
    data.write_text(json.dumps({"id": "p1", "s1": "a", "s2": "b"}) + "\n")
    inputs = INPUTS.load(parse("--pairs", str(data)), Check())
    assert not inputs.single and inputs.dataset == str(data) and inputs.items[0].id == "p1"  # type: ignore[attr-defined]


def test_neither_both_or_an_incomplete_item_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^give S1, S2, or --pairs FILE$"):
        INPUTS.load(parse(), Check())
    with pytest.raises(InputError, match=r"^give S1, S2, or --pairs FILE$"):
        INPUTS.load(parse("--tag", "x"), Check())  # a list flag alone is no item
    with pytest.raises(InputError, match=r"not both$"):
        INPUTS.load(parse("a", "--pairs", str(tmp_path / "p.jsonl")), Check())
    with pytest.raises(InputError, match=r"s2"):
        INPUTS.load(parse("only one"), Check())
