"""Dataset loaders: EVOUNA (improper / null / "nan" handling, "/"-joined gold) and generic JSONL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voirdire.protocols.qa_entailment.data import (
    EVOUNA_SYSTEMS,
    DatasetError,
    load_dataset,
    load_evouna,
    load_jsonl,
    select_systems,
)

SHARED = Path(__file__).resolve().parents[4] / "shared" / "data" / "evouna"


def _row(**overrides: object) -> dict:
    row: dict = {"question": "what star sign is x", "golden_answer": "Scorpio/Skorpio", "improper": False}
    for s in EVOUNA_SYSTEMS:
        row[f"answer_{s}"] = f"{s} says Scorpio"
        row[f"judge_{s}"] = True
    row.update(overrides)
    return row


def _write(tmp_path: Path, rows: list, name: str = "NQ.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def test_evouna_rows_become_items_per_system(tmp_path: Path) -> None:
    path = _write(tmp_path, [_row(), _row(question="q2", golden_answer="A")])
    items = load_evouna(path)
    assert len(items) == 2 * len(EVOUNA_SYSTEMS)
    first = items[0]
    assert first.id == "NQ-0-fid" and first.source == "NQ.json row 0"
    assert first.gold_answers == ("Scorpio", "Skorpio")  # "/"-joined gold answers are split
    assert [it.system for it in items[:5]] == list(EVOUNA_SYSTEMS)
    assert load_evouna(path, systems=["gpt4"])[1].id == "NQ-1-gpt4"


def test_evouna_excludes_improper_and_unjudged(tmp_path: Path) -> None:
    rows = [
        _row(improper=True),
        _row(judge_fid=None, judge_gpt35="nan", answer_newbing=None, judge_newbing=False),
        _row(improper=True, golden_answer=None),  # NQ has one such row: skipped, not an error
    ]
    items = load_evouna(_write(tmp_path, rows))
    assert {it.system for it in items} == {"chatgpt", "gpt4", "newbing"}
    assert all(it.source == "NQ.json row 1" for it in items)
    newbing = next(it for it in items if it.system == "newbing")
    assert newbing.system_answer == "" and newbing.human_judgment is False
    kept = load_evouna(_write(tmp_path, rows), require_judgment=False, include_improper=True)
    assert len(kept) == 2 * len(EVOUNA_SYSTEMS)
    assert sum(it.human_judgment is None for it in kept) == 2


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({"judge_gpt4": "yes"}, "judge_gpt4"),
        ({"judge_fid": 1}, "judge_fid"),
        ({"golden_answer": None}, "golden_answer"),
        ({"answer_chatgpt": 3}, "answer_chatgpt"),
        ({"surprise": 1}, "surprise"),
    ],
)
def test_evouna_malformed_row_names_file_row_and_field(tmp_path: Path, bad: dict, field: str) -> None:
    row = _row(**bad)
    path = _write(tmp_path, [_row(), _row(), row])
    with pytest.raises(DatasetError) as err:
        load_evouna(path)
    message = str(err.value)
    assert "NQ.json[2]: " in message and field in message


def test_evouna_missing_field_and_bad_json(tmp_path: Path) -> None:
    row = _row()
    del row["improper"]
    with pytest.raises(DatasetError, match=r"NQ\.json\[0\]: .*improper"):
        load_evouna(_write(tmp_path, [row]))
    broken = tmp_path / "TQ.json"
    broken.write_text('[{"question": "q",\n ', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"TQ\.json:2: invalid JSON"):
        load_evouna(broken)
    with pytest.raises(DatasetError, match="JSON list of rows at the top level"):
        load_evouna(_write(tmp_path, {"rows": []}))


def _jsonl(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "mine.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_jsonl_loads_and_defaults(tmp_path: Path) -> None:
    good = {"question": "q", "gold_answers": ["a", "b"], "system_answer": "a!"}
    path = _jsonl(
        tmp_path,
        [
            json.dumps(good),
            "",
            json.dumps({**good, "id": "x", "system": "s2", "human_judgment": False, "meta": {"k": 1}}),
        ],
    )
    items = load_jsonl(path)
    assert [it.id for it in items] == ["mine-1", "x"]
    assert items[0].system == "system" and items[0].human_judgment is None
    assert items[1].human_judgment is False and items[1].gold_answers == ("a", "b")
    assert [it.id for it in load_dataset(path, systems=["s2"])] == ["x"]


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ('{"question": "q", "gold_answers": "a", "system_answer": "a"}', "gold_answers"),
        ('{"question": "q", "gold_answers": [], "system_answer": "a"}', "gold_answers"),
        ('{"question": "q", "gold_answers": ["  "], "system_answer": "a"}', "blank"),
        ('{"question": "q", "gold_answers": ["a"]}', "system_answer"),
        ('{"question": "q", "gold_answers": ["a"], "system_answer": "a", "human_judgement": true}', "human_judgement"),
        ('{"question": "q", "gold_answers": ["a"], "system_answer": "a", "human_judgment": "yes"}', "human_judgment"),
        ('{"question": "q", "gold_answers": ["a"], "system_answer": "a"', "invalid JSON"),
        ('["q", ["a"], "a"]', "JSON object"),
    ],
)
def test_jsonl_malformed_line_names_line(tmp_path: Path, line: str, needle: str) -> None:
    ok = '{"question": "q", "gold_answers": ["a"], "system_answer": "a"}'
    path = _jsonl(tmp_path, [ok, ok, line])
    with pytest.raises(DatasetError) as err:
        load_jsonl(path)
    assert "mine.jsonl:3: " in str(err.value) and needle in str(err.value)


def test_jsonl_duplicate_id_and_unknown_suffix(tmp_path: Path) -> None:
    line = '{"id": "same", "question": "q", "gold_answers": ["a"], "system_answer": "a"}'
    with pytest.raises(DatasetError, match=r"\.jsonl:2: duplicate id 'same' \(first on line 1\)"):
        load_jsonl(_jsonl(tmp_path, [line, line]))
    with pytest.raises(DatasetError, match="unknown format"):
        load_dataset(tmp_path / "data.csv")


@pytest.mark.skipif(not SHARED.exists(), reason="shared EVOUNA data not present")
def test_evouna_counts_match_source_md() -> None:
    nq, tq = load_evouna(SHARED / "NQ.json"), load_evouna(SHARED / "TQ.json")
    # SOURCE.md: 15,098 NQ pairs with an answer and a judgment, plus one judged pair whose answer is null.
    assert len(nq) == 15_099 and sum(it.system_answer == "" and it.system == "fid" for it in nq) >= 1
    assert len(tq) == 9_690
    assert {it.system: 0 for it in tq}.keys() == set(EVOUNA_SYSTEMS)


def test_select_systems_by_code_or_by_the_papers_name() -> None:
    assert select_systems([], evouna=True) is None and select_systems(["gpt4", "all"], evouna=True) is None
    assert select_systems(["DPR-FiD,chatgpt", "fid"], evouna=True) == ["fid", "chatgpt"]
    assert select_systems(["mine, yours"], evouna=False) == ["mine", "yours"]
    with pytest.raises(ValueError, match=r"unknown EVOUNA system\(s\) \['gpt5'\]: use fid, gpt35"):
        select_systems(["gpt5"], evouna=True)
