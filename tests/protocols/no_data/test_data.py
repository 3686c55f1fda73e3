"""Data loaders: clear errors naming the file and row/line."""

from __future__ import annotations

import json

import pytest

from voirdire.protocols.no_data.data import (
    DataError,
    check_labels,
    load_bitstrings,
    load_split,
    parse_bitstrings,
    resolve_dataset,
)
from voirdire.protocols.no_data.rubric import OOP_RUBRIC


def write(tmp_path, payload, name="d.json"):
    path = tmp_path / name
    path.write_text(payload if isinstance(payload, str) else json.dumps(payload), encoding="utf-8")
    return path


def test_loads_pairs_with_string_or_int_labels(tmp_path):
    rows = load_bitstrings(write(tmp_path, [["0101", "1"], ["1111", 0]]))
    assert [(r.x, r.y) for r in rows] == [("0101", 1), ("1111", 0)]


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ('[["0101", "1"],\n ["01", ', ":2: invalid JSON"),
        ({"x": 1}, "expected a JSON list"),
        ([], "no rows"),
        ([["0101", "1"], ["0101"]], "[1]: expected a pair"),
        ([["0101", "1"], ["01a1", "0"]], "[1]: x must be"),
        ([["0101", "1"], ["011", "0"]], "[1]: x has 3 bits but the first row has 4"),
        ([["0101", "2"]], "[0]: label must be 0 or 1"),
        ([["0101", True]], "[0]: label must be 0 or 1"),
    ],
)
def test_bad_files_name_the_file_and_the_row(tmp_path, payload, message):
    path = write(tmp_path, payload)
    with pytest.raises(DataError) as err:
        load_bitstrings(path)
    assert str(path) in str(err.value) and message in str(err.value)


def test_missing_and_non_utf8_files(tmp_path):
    with pytest.raises(DataError, match="data file not found"):
        load_bitstrings(tmp_path / "nope.json")
    bad = tmp_path / "latin.json"
    bad.write_bytes(b'[["0101", "\xff"]]')
    with pytest.raises(DataError, match="not UTF-8"):
        load_bitstrings(bad)


def test_parse_bitstrings_reports_its_source():
    with pytest.raises(DataError, match=r"mem\[0\]"):
        parse_bitstrings([["x", "1"]], "mem")


def test_shared_splits_match_source_md(shared_data):
    root = shared_data / "no_data_algorithm"
    for name in ("ip", "oop"):
        train, test = load_split(name, "train", root), load_split(name, "test", root)
        assert (len(train.rows), len(test.rows)) == (2000, 498)
        assert sum(test.ys) == 249 and {len(x) for x in test.xs} == {12}
    assert load_split("ip", "test", root).rows[0].x == "111110111011"
    assert load_split("oop", "test", root).rows[0].x == "110110111011"


def test_resolve_dataset(shared_data, tmp_path):
    root = shared_data / "no_data_algorithm"
    assert resolve_dataset("oop", root=root).rubric is OOP_RUBRIC
    path = write(tmp_path, [["111000000001", "1"]], "other_custom.json")
    # A file's rubric is never guessed from its name ("other" used to mean OOP): it must be given.
    with pytest.raises(DataError, match=r"needs its verifier rubric \(--rubric ip\|oop\)"):
        resolve_dataset(str(path), root=root)
    assert resolve_dataset(str(path), rubric="oop", root=root).rubric_name == "oop"
    assert resolve_dataset(str(path), rubric="ip", root=root).rubric_name == "ip"
    assert resolve_dataset("oop", rubric="ip", root=root).rubric_name == "ip"
    with pytest.raises(DataError, match="unknown rubric"):
        resolve_dataset(str(path), rubric="nope", root=root)
    with pytest.raises(DataError, match="unknown data set"):
        load_split("both", root=root)


def test_check_labels_points_at_the_row(tmp_path):
    rows = parse_bitstrings([["111000000001", "1"], ["000000000000", "1"]])
    with pytest.raises(DataError, match=r"\[1\]: label 1 but rubric 'oop' gives 0"):
        check_labels(rows, OOP_RUBRIC, "f.json")
