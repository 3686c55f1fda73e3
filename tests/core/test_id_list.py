"""A run's session ids kept compactly (``voirdire.base.IdList``, docs/performance.md, flat memory): read, compared,
pickled and dumped as the list of strings they stand for, made into strings only when read, and passed from the
dataset's check to the run's result without a copy."""

from __future__ import annotations

import copy
import json
import pickle
from array import array
from pathlib import Path

import pytest

from voirdire.base import IdList
from voirdire.executors import RunResult

IDS = ["claim-1", "é-2", "", "x" * 300, "emoji-\U0001f600", "lone-\udc80"]


def test_reads_as_the_list_it_stands_for() -> None:
    ids = IdList(IDS)
    assert len(ids) == len(IDS) and list(ids) == IDS and ids == IDS and ids == tuple(IDS)
    assert [ids[k] for k in range(len(IDS))] == IDS and ids[-1] == IDS[-1] and ids[-len(IDS)] == IDS[0]
    assert ids[1:4] == IDS[1:4] and ids[::-2] == IDS[::-2]
    assert "é-2" in ids and "" in ids and "claim" not in ids and 3 not in ids
    assert ids.index("x" * 300) == 3 and ids.count("") == 1 and list(reversed(ids)) == IDS[::-1]
    for bad in (len(IDS), -len(IDS) - 1):
        with pytest.raises(IndexError):
            ids[bad]
    assert ids != IDS[:-1] and ids != [*IDS[:-1], "other"] and IdList() == [] and not IdList()
    assert IdList(["a"]) == IdList(["a"]) and IdList(["ab"]) != IdList(["a", "b"])  # the same bytes, other ids


def test_appended_one_at_a_time_and_copied_as_a_list() -> None:
    ids = IdList()
    for sid in IDS:
        ids.append(sid)
    assert ids == IDS
    for again in (pickle.loads(pickle.dumps(ids)), copy.deepcopy(ids), copy.copy(ids)):
        assert isinstance(again, IdList) and again == IDS
    assert repr(IdList(["a", "b"])) == "IdList(['a', 'b'])"
    with pytest.raises(TypeError):
        hash(ids)


def test_a_run_result_keeps_an_id_list_as_it_is_and_dumps_a_list() -> None:
    ids = IdList(IDS)
    result = RunResult(out=Path("t.jsonl"), run_id="r1", session_ids=ids)
    assert result.session_ids is ids  # not copied: a long run holds its ids once
    from_list = RunResult(out=Path("t.jsonl"), run_id="r1", session_ids=["a", "b"])
    assert isinstance(from_list.session_ids, IdList) and from_list.session_ids == ["a", "b"]
    assert json.loads(RunResult(out=Path("t"), run_id="r", session_ids=IdList(IDS[:-1])).model_dump_json())[
        "session_ids"
    ] == IDS[:-1]  # (a lone surrogate is no more JSON in an IdList than in a list)
    assert result.model_dump()["session_ids"] == IDS and type(result.model_dump()["session_ids"]) is list
    assert RunResult.model_validate_json(from_list.model_dump_json()).session_ids == ["a", "b"]
    assert RunResult.model_json_schema()["properties"]["session_ids"]["type"] == "array"
    with pytest.raises(ValueError, match="session_ids"):
        RunResult(out=Path("t.jsonl"), run_id="r1", session_ids=[1, 2])


async def test_a_streamed_datasets_ids_reach_the_result_without_a_copy(tmp_path: Path) -> None:
    from tests.chaos.protocol import Chaos, Question
    from tests.core.test_workers import script
    from voirdire.registry.datasets import ItemStream, stream_items
    from voirdire.runner import run_protocol
    from voirdire.session import Protocol

    class Plain(Chaos):
        item_id = Protocol.item_id  # the runner's default names (the item's id): the dataset's check pass has them

    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{k:03d}", "question": f"Capital {k}?"}) + "\n" for k in range(6)))
    streamed = stream_items(data, Question.model_validate)
    assert isinstance(streamed, ItemStream) and isinstance(streamed.ids, IdList)
    result = await run_protocol(Plain(), streamed, out=tmp_path / "t.jsonl", roles=script(tmp_path), progress=False)
    assert result.session_ids is streamed.ids and result.session_ids == [f"q{k:03d}" for k in range(6)]
    assert len(result.verdicts) == 6
    repeated = await run_protocol(Plain(), streamed, out=tmp_path / "u.jsonl", roles=script(tmp_path), repeats=2,
                                  progress=False)  # fmt: skip
    assert isinstance(repeated.session_ids, IdList) and repeated.session_ids[:3] == ["q000@r1", "q000@r2", "q001@r1"]
    assert streamed.ids == [f"q{k:03d}" for k in range(6)]  # a run with repeats made its own ids, not appended


def test_offsets_widen_past_four_gib_of_ids() -> None:
    """Offsets are 4 bytes until the ids' bytes pass what 4 bytes hold; then 8, the ids read as before."""
    ids = IdList(["a", "bc"])
    assert ids._ends.typecode == "I"
    with pytest.raises(OverflowError):
        array("I").append(2**32)  # what the offsets array says past 4 GiB (none is made here)
    ids._ends = _Full(ids._ends)  # type: ignore[assignment]
    ids.append("def")
    assert ids._ends.typecode == "q" and ids == ["a", "bc", "def"]


class _Full:
    """An offsets array that is full at 4 bytes: its next append overflows, as ``array('I')``'s does past 2**32."""

    def __init__(self, ends: object) -> None:
        self.ends = ends

    def append(self, end: int) -> None:
        raise OverflowError("unsigned int is greater than maximum")

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.ends)  # type: ignore[call-overload]

    def __len__(self) -> int:
        return len(self.ends)  # type: ignore[arg-type]
