"""Dataset loading: formats, real shared data, errors naming file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from voirdire.protocols.cross_examination import CrossExamination
from voirdire.registry.datasets import DatasetError, as_list, load_items, read_records


def test_popqa_loads_with_aliases(shared_data: Path) -> None:
    items = load_items(
        shared_data / "popqa" / "popqa_longtail_merged.jsonl", CrossExamination.item_from_record, limit=20
    )
    assert len(items) == 20 and all(i.question and i.answers for i in items)
    assert items[0].id == "4382392" and "politician" in items[0].answers


def test_csv_tsv_and_json_list(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text('question,answers\n"Where?","[""Paris"", ""France""]"\nWho?,Bob|Robert\n')
    items = load_items(tmp_path / "a.csv", CrossExamination.item_from_record)
    assert [i.answers for i in items] == [["Paris", "France"], ["Bob", "Robert"]]
    assert [i.id for i in items] == ["a.csv:2", "a.csv:3"]
    (tmp_path / "a.json").write_text('[{"claim": "X."}, 3]')
    with pytest.raises(DatasetError, match=r"a\.json\[1\]: expected a JSON object"):
        list(read_records(tmp_path / "a.json"))
    (tmp_path / "a.tsv").write_text("claim\textra\nX.\t1\t2\n")
    with pytest.raises(DatasetError, match=r"a\.tsv:2: more fields"):
        list(read_records(tmp_path / "a.tsv"))


def test_duplicate_ids_and_unknown_format(tmp_path: Path) -> None:
    (tmp_path / "d.jsonl").write_text('{"id": 1, "claim": "A."}\n\n{"id": 1, "claim": "B."}\n')
    with pytest.raises(DatasetError, match=r"d\.jsonl:3: duplicate id '1' \(first at .*d\.jsonl:1\)"):
        load_items(tmp_path / "d.jsonl", CrossExamination.item_from_record)
    with pytest.raises(DatasetError, match="unknown dataset format"):
        (tmp_path / "d.txt").write_text("x")
        list(read_records(tmp_path / "d.txt"))
    with pytest.raises(ValueError, match="JSON list"):
        as_list("[oops")
