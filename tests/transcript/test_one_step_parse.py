"""A transcript line is parsed and validated in one step (pydantic-core's JSON); where that step refuses a line,
the two steps it replaced (``json.loads``, then validation) decide, so every line reads as it did: the same record,
the same torn tail, the same one-line error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.core.test_report import FIXTURES
from voirdire.transcript import TranscriptError, iter_records
from voirdire.transcript.schema import _LINE


def two_steps(raw: bytes) -> object:
    return _LINE.validate_python(json.loads(raw.decode("utf-8")))


def test_every_fixture_line_reads_as_the_two_steps_read_it() -> None:
    lines = 0
    for path in sorted(FIXTURES.glob("*.jsonl")):
        records = list(iter_records(path))
        raws = [raw for raw in path.read_bytes().splitlines() if raw.strip()]
        assert len(records) == len(raws), path
        for record, raw in zip(records, raws, strict=True):
            expected = two_steps(raw)
            assert type(record) is type(expected) and repr(record) == repr(expected), (path, raw[:80])
            lines += 1
    assert lines > 500  # every kind of record, from every protocol


def _file(tmp_path: Path, *lines: bytes) -> Path:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def test_a_line_the_one_step_refuses_is_read_by_the_two_steps(tmp_path: Path) -> None:
    header = (FIXTURES / "no_data.jsonl").read_bytes().splitlines()[0]
    record = json.loads(header)
    record["parameters"]["note"] = "\udc00 a lone surrogate"  # JSON's \udc00: Python reads it, pydantic-core refuses
    line = json.dumps(record).encode()
    with pytest.raises(ValueError):
        _LINE.validate_json(line)
    (got,) = list(iter_records(_file(tmp_path, line)))
    assert got.parameters["note"] == "\udc00 a lone surrogate"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        (b'{"kind": "header", "a": "\xff"}', "not UTF-8 text"),
        (b'{"kind": "header",', "not JSON: "),
        (b'{"kind": "nothing"}', "unknown record kind 'nothing'"),
        (b"[1, 2]", "not a JSON object"),
    ],
)
def test_bad_lines_say_what_they_said(tmp_path: Path, bad: bytes, says: str) -> None:
    header = (FIXTURES / "no_data.jsonl").read_bytes().splitlines()[0]
    path = _file(tmp_path, header, bad, header)
    with pytest.raises(TranscriptError, match=rf"t\.jsonl:2: not a transcript record \({says}"):
        list(iter_records(path))
