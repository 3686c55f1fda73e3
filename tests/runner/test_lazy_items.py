"""The runner takes items one at a time as a slot frees: no list of the pending (item, session id) pairs and no
table of items by session id is built, so a run holds the sessions in flight, not a second copy of its dataset.
Resume keeps session ids only and still refuses a finished session run on a different item."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import overload

import pytest

from tests.chaos.protocol import Chaos, Question
from tests.core.test_workers import items, script
from voirdire.registry.datasets import DatasetError, ItemStream, SelectionError, load_items, stream_items
from voirdire.runner import ResumeError, run_protocol
from voirdire.session import Protocol, Session
from voirdire.transcript import Verdict


class Watched(Sequence[Question]):
    """Items whose latest pass records how far it has been taken (``pulled``)."""

    def __init__(self, questions: list[Question]) -> None:
        self.questions, self.pulled = questions, 0

    def __len__(self) -> int:
        return len(self.questions)

    @overload
    def __getitem__(self, i: int) -> Question: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Question]: ...
    def __getitem__(self, i: int | slice) -> Question | Sequence[Question]:
        raise AssertionError("the runner indexes no item: it takes them in order")

    def __iter__(self) -> Iterator[Question]:
        self.pulled = 0
        for q in self.questions:
            self.pulled += 1
            yield q


class Recording(Chaos):
    """The chaos protocol, noting how far the items were taken when each session started."""

    def __init__(self, watched: Watched) -> None:
        super().__init__()
        self.watched = watched
        self.seen: list[int] = []

    async def run(self, item: Question, session: Session) -> Verdict:
        self.seen.append(self.watched.pulled)
        return await super().run(item, session)


@pytest.mark.parametrize("repeats", [1, 2])
async def test_items_are_taken_as_slots_free(tmp_path: Path, repeats: int) -> None:
    watched = Watched(items(30))
    protocol = Recording(watched)
    result = await run_protocol(protocol, watched, out=tmp_path / "t.jsonl", roles=script(tmp_path), concurrency=2,
                                repeats=repeats, progress=False)  # fmt: skip
    assert len(result.verdicts) == 30 * repeats and not result.errors
    assert protocol.seen[0] <= 2  # the first session starts with at most one item per slot taken, not all 30
    assert protocol.seen == sorted(protocol.seen) and protocol.seen[-1] == 30


async def test_resume_skips_by_id_and_takes_only_what_is_left(tmp_path: Path) -> None:
    out, roles = tmp_path / "t.jsonl", script(tmp_path)
    first = await run_protocol(Chaos(), items(10)[:4], out=out, roles=roles, progress=False)
    assert len(first.verdicts) == 4
    watched = Watched(items(10))
    protocol = Recording(watched)
    again = await run_protocol(protocol, watched, out=out, roles=roles, concurrency=1, progress=False)
    assert again.skipped == 4 and len(again.verdicts) == 10 and len(protocol.seen) == 6
    assert protocol.seen[0] == 5  # the four finished items passed over, the fifth taken for the first session
    changed = [q if q.id != "q002" else q.model_copy(update={"question": "Capital 9?"}) for q in items(10)]
    with pytest.raises(ResumeError, match="'q002' was run on a different item"):
        await run_protocol(Chaos(), changed, out=out, roles=roles, progress=False)


def write_questions(path: Path, n: int, extra: str = "") -> Path:
    path.write_text("".join(f'{{"id": "q{i:03d}", "question": "Capital {i}?"}}\n' for i in range(n)) + extra)
    return path


def test_a_streamed_dataset_is_checked_first_and_read_again_item_by_item(tmp_path: Path) -> None:
    data = write_questions(tmp_path / "d.jsonl", 12)
    streamed = stream_items(data, Question.model_validate, limit=5, offset=2)
    assert isinstance(streamed, ItemStream) and len(streamed) == 5
    assert list(streamed) == load_items(data, Question.model_validate, limit=5, offset=2)
    assert streamed[-1].id == "q006" and [q.id for q in streamed[1:3]] == ["q003", "q004"]
    first = iter(streamed)
    assert next(first).id == "q002"  # one record read: a generator, not a list made at the first pull
    assert first.gi_frame is not None  # type: ignore[attr-defined]
    write_questions(data, 4)  # the file cut short under a run: said, not other items silently
    with pytest.raises(DatasetError, match="changed while it was read"):
        list(streamed)


def test_a_streamed_dataset_says_what_load_items_says(tmp_path: Path) -> None:
    bad = write_questions(tmp_path / "bad.jsonl", 3, extra="{not json\n")
    with pytest.raises(DatasetError, match=r"bad\.jsonl:4"):
        stream_items(bad, Question.model_validate)
    twice = write_questions(tmp_path / "twice.jsonl", 3, extra='{"id": "q001", "question": "Again?"}\n')
    with pytest.raises(DatasetError, match="duplicate id 'q001'"):
        stream_items(twice, Question.model_validate)
    with pytest.raises(SelectionError, match="skips every record"):
        stream_items(write_questions(tmp_path / "few.jsonl", 2), Question.model_validate, offset=5)
    assert isinstance(stream_items([{"id": "a", "question": "Q?"}], Question.model_validate), list)  # in memory


async def test_a_run_streams_a_dataset_file(tmp_path: Path) -> None:
    data = write_questions(tmp_path / "d.jsonl", 9)
    out, roles = tmp_path / "t.jsonl", script(tmp_path)
    streamed = stream_items(data, Question.model_validate)
    result = await run_protocol(Chaos(), streamed, out=out, roles=roles, concurrency=3, repeats=2, progress=False)
    listed = await run_protocol(Chaos(), load_items(data, Question.model_validate), out=tmp_path / "u.jsonl",
                                roles=roles, concurrency=3, repeats=2, progress=False)  # fmt: skip
    assert result.session_ids == listed.session_ids and len(result.verdicts) == 18 and not result.errors
    assert {k: v.decision for k, v in result.verdicts.items()} == {k: v.decision for k, v in listed.verdicts.items()}


def _count_passes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each pass over a dataset file (``read_records`` started), by the file's name."""
    import voirdire.registry.datasets as datasets

    passes: list[str] = []
    read = datasets.read_records

    def counted(path, fields=None):  # type: ignore[no-untyped-def]
        passes.append(Path(path).name)
        return read(path, fields)

    monkeypatch.setattr(datasets, "read_records", counted)
    return passes


class ById(Chaos):
    """The chaos protocol naming its items as most protocols do (``Protocol.item_id``: the id field)."""

    item_id = Protocol.item_id


async def test_a_fresh_run_reads_a_streamed_file_twice_its_ids_from_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    passes = _count_passes(monkeypatch)
    data = tmp_path / "d.jsonl"
    data.write_text("".join(f'{{"id": "{i}", "question": "Capital {k}?"}}\n' for k, i in enumerate(("q0", "", "q2"))))
    streamed = stream_items(data, Question.model_validate)
    assert isinstance(streamed, ItemStream) and passes == ["d.jsonl"]
    assert streamed.ids == ["q0", "item-2", "q2"]  # as the runner names items by default: the id, else item-N
    passes.clear()
    result = await run_protocol(ById(), streamed, out=tmp_path / "t.jsonl", roles=script(tmp_path), progress=False)
    assert passes == ["d.jsonl"]  # the run's one pass; the session ids came from the checking pass
    assert result.session_ids == streamed.ids and len(result.verdicts) == 3 and not result.errors


class Renamed(Chaos):
    """Items named otherwise than by their id field: the ids are the protocol's, read from the items."""

    def item_id(self, item: Question) -> str:
        return f"x-{item.id}"


async def test_a_protocol_naming_its_items_gets_its_own_ids(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    passes = _count_passes(monkeypatch)
    streamed = stream_items(write_questions(tmp_path / "d.jsonl", 3), Question.model_validate)
    result = await run_protocol(Renamed(), streamed, out=tmp_path / "t.jsonl", roles=script(tmp_path),
                                progress=False)  # fmt: skip
    assert result.session_ids == ["x-q000", "x-q001", "x-q002"] and len(passes) == 3  # check, ids, run


def test_a_duplicate_id_names_where_it_was_first(tmp_path: Path) -> None:
    twice = write_questions(tmp_path / "twice.jsonl", 3, extra='{"id": "q001", "question": "Again?"}\n')
    with pytest.raises(DatasetError, match=r"twice\.jsonl:4: duplicate id 'q001' \(first at .*twice\.jsonl:2\)"):
        stream_items(twice, Question.model_validate)
    with pytest.raises(DatasetError, match=r"twice\.jsonl:4: duplicate id 'q001' \(first at .*twice\.jsonl:2\)"):
        load_items(twice, Question.model_validate, offset=1)
