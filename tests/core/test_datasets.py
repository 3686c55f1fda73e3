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


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        # an unterminated quote swallowed the rest of the file into one item, exit 0
        ("open.csv", 'question,answers\nok?,a\n"Where is\nParis?,b\nWho?,c\n', r"open\.csv:3: a quoted field starts"),
        ("twice.csv", "question,answers,question\nA?,a,B?\n", r"twice\.csv:1: the header names column 'question' "
         r"twice \(columns 1 and 3\)"),
        ("stray.csv", 'question,answers\n"A?"x,a\n', r"stray\.csv:2: not valid CSV"),
        ("obj.jsonl", '{"question": "A?"}\n{"id": {"a": 1}, "question": "B?"}\n',
         r"obj\.jsonl:2: id must be a string or a whole number, got an object"),
        ("float.jsonl", '{"id": 1.5, "question": "A?"}\n', r"float\.jsonl:1: id must be .* a number with a fraction"),
        ("list.json", '[{"id": [1], "question": "A?"}]', r"\[0\]: id must be .* got a list"),
    ],
)  # fmt: skip
def test_strict_tabular_input_is_an_error_naming_the_line_and_nothing_runs(
    name: str, text: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from voirdire.cli import main

    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(DatasetError, match=message):
        load_items(path, CrossExamination.item_from_record)
    out = tmp_path / "t.jsonl"
    script = tmp_path / "s.yaml"
    script.write_text('default: "1. Is X Y?"\n')
    code = main(["examine", "--questions", str(path), "--model", f"scripted:{script}", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and len([ln for ln in err.splitlines() if ln.startswith("voirdire: error")]) == 1, err
    assert not out.exists()


def test_ids_that_are_strings_or_whole_numbers_load(tmp_path: Path) -> None:
    (tmp_path / "ok.jsonl").write_text('{"id": 7, "question": "A?"}\n{"id": "b", "question": "B?"}\n')
    assert [i.id for i in load_items(tmp_path / "ok.jsonl", CrossExamination.item_from_record)] == ["7", "b"]
