"""``voirdire compare`` matches runs by item id: a run in which two sessions share an item id is said to be one (a
one-line error naming the file and the id), never merged silently into one row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.web.test_compare_browser import two_runs
from voirdire.cli import main


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder, scripts = tmp_path_factory.mktemp("shared-ids"), tmp_path_factory.mktemp("shared-ids-scripts")
    return two_runs(folder, scripts)


def test_two_sessions_sharing_an_item_id_are_said_not_merged(
    pair: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = pair
    lines = second.read_text().splitlines()
    again = []
    for line in lines:  # the session of "paris" once more, under another session id, same item id
        rec = json.loads(line)
        if rec.get("session_id") == "paris":
            rec["session_id"] = "paris-again"
            again.append(json.dumps(rec))
    doubled = tmp_path / "doubled.jsonl"
    doubled.write_text("\n".join([*lines, *again]) + "\n")
    assert main(["compare", str(first), str(second)]) == 0  # distinct ids compare as before
    capsys.readouterr()
    code = main(["compare", str(first), str(doubled)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "doubled.jsonl: 2 sessions share item id 'paris'" in err
