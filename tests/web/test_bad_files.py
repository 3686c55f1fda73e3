"""One bad file, number or parameter never takes the viewer down: a folder holding a good transcript beside a file
nested 5,000 deep, or a transcript whose token counts are not numbers, still lists the good run; page parameters
that are not small whole numbers are page 1; every error page carries the security headers."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from voirdire.web.app import SECURITY_HEADERS, create_app
from voirdire.web.catalog import Library

DEEP = '{"a":' * 5000


def _folder(tmp_path: Path, good: Path, bad: dict[str, str]) -> Path:
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copy(good, folder / "good.jsonl")
    for name, text in bad.items():
        (folder / name).write_text(text)
    return folder


def _client(folder: Path) -> TestClient:
    return TestClient(create_app(Library([folder])), base_url="http://127.0.0.1", raise_server_exceptions=False)


def _with_bad_usage(good: Path, value: object) -> str:
    lines = good.read_text().splitlines()
    for k, line in enumerate(lines):
        rec = json.loads(line)
        if rec.get("kind") == "model_call":
            rec["usage"]["prompt_tokens"] = value
            lines[k] = json.dumps(rec)
            break
    return "\n".join(lines) + "\n"


def test_a_deeply_nested_file_beside_a_good_transcript(transcripts: dict[str, Path], tmp_path: Path) -> None:
    good = transcripts["cross_examination"]
    header = good.read_text().splitlines()[0]
    folder = _folder(tmp_path, good, {"deep.jsonl": DEEP + "\n", "deep_later.jsonl": header + "\n" + DEEP + "\n"})
    client = _client(folder)
    runs = client.get("/")
    assert runs.status_code == 200
    assert "good.jsonl" in runs.text
    assert "nested more than 64 levels" in runs.text  # the transcript with a deep line has its error on the list
    good_key = next(k for k, _ in Library([folder]).indexes() if k.startswith("good"))
    assert client.get(f"/run/{good_key}").status_code == 200


@pytest.mark.parametrize("value", ["lots", -1800, 10**400])
def test_token_counts_that_are_not_counts_mark_the_run_not_the_viewer(
    transcripts: dict[str, Path], tmp_path: Path, value: object
) -> None:
    good = transcripts["cross_examination"]
    folder = _folder(tmp_path, good, {"bad.jsonl": _with_bad_usage(good, value)})
    client = _client(folder)
    runs = client.get("/")
    assert runs.status_code == 200 and "good.jsonl" in runs.text
    assert re.search(r"bad\.jsonl:\d+: (usage counts that are not token counts|not a transcript record)", runs.text)
    for key, _ in Library([folder]).indexes():
        assert client.get(f"/run/{key}").status_code == 200


@pytest.mark.parametrize("page", ["9" * 5000, "²", "-3", "1e9", ""])
def test_a_page_parameter_that_is_no_small_number_is_page_one(transcripts: dict[str, Path], page: str) -> None:
    folder = transcripts["cross_examination"].parent
    client = _client(folder)
    key = next(k for k, i in Library([folder]).indexes() if i.path == transcripts["cross_examination"])
    answer = client.get(f"/run/{key}", params={"page": page})
    assert answer.status_code == 200


def test_an_internal_error_page_carries_the_security_headers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from voirdire.web import app as web_app

    def broken(self: object, prices: object = None) -> list[object]:
        raise RuntimeError("a bug")

    monkeypatch.setattr(web_app.Library, "summaries", broken)
    answer = _client(tmp_path).get("/")
    assert answer.status_code == 500
    for name, value in SECURITY_HEADERS.items():
        assert answer.headers.get(name) == value, name
    assert "a bug" not in answer.text  # no internals on the page


@pytest.mark.parametrize(
    "forge",
    [
        None,  # not an index file at all
        "UPDATE meta SET v = 'lots' WHERE k = 'size'",
        """UPDATE rows SET row = '["s", "r", "9,9;x", null]'""",
        "UPDATE rows SET row = json_set(row, '$[8]', 'lots')",  # calls that are no number
        "UPDATE headers SET rid = 1, pos = 'two'",
    ],
)
def test_a_forged_index_file_is_rebuilt_from_the_transcript(
    transcripts: dict[str, Path], tmp_path: Path, forge: str | None
) -> None:
    from voirdire.web.index import TranscriptIndex, default_store

    folder = _folder(tmp_path, transcripts["cross_examination"], {})
    path = folder / "good.jsonl"
    TranscriptIndex(path).refresh()  # writes the index file beside the transcript
    store = default_store(path)
    if forge is None:
        store.write_text(json.dumps([{"size": 1}]))
    else:
        with contextlib.closing(sqlite3.connect(store)) as con, con:
            con.execute(forge)
    client = _client(folder)
    runs = client.get("/")
    assert runs.status_code == 200 and "good.jsonl" in runs.text
    key = next(k for k, _ in Library([folder]).indexes())
    assert client.get(f"/run/{key}").status_code == 200
