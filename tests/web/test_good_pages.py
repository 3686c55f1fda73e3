"""The viewer serves every good page: a run with one damaged line still compares, a run whose header holds a field
of a newer schema shows what it can read and names that field, and an index file forged to agree with the
transcript's size, time and digest but not with its lines is rebuilt. None of them is a 500."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from tests.web.test_compare_browser import two_runs
from voirdire.web.app import create_app
from voirdire.web.catalog import Library
from voirdire.web.index import TranscriptIndex, default_store


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder, scripts = tmp_path_factory.mktemp("good-pages"), tmp_path_factory.mktemp("good-pages-scripts")
    return two_runs(folder, scripts)


def _client(folder: Path, persist: bool = True) -> TestClient:
    return TestClient(
        create_app(Library([folder], persist=persist)), base_url="http://127.0.0.1", raise_server_exceptions=False
    )


def _copy(pair: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / "runs"
    folder.mkdir()
    return shutil.copy(pair[0], folder / "examine.jsonl"), shutil.copy(pair[1], folder / "skeptic.jsonl")


def _pages(key: str, client: TestClient) -> Iterator[tuple[str, int]]:
    for url in ("/", f"/run/{key}", f"/run/{key}/report", f"/run/{key}/charts"):
        yield url, client.get(url).status_code
    yield "chart", 200 if client.get(f"/run/{key}/chart/verdicts.svg").status_code in (200, 404) else 500


DAMAGED = [
    pytest.param(lambda line: line[: len(line) // 2], id="cut"),
    pytest.param(lambda line: "\x00garbage{" + line, id="garbage"),
    pytest.param(lambda line: line.replace('"kind":"', '"kind":"nonsense_'), id="unknown-kind"),
    pytest.param(lambda line: line.replace('"seq":', '"seq":"x",  "was":'), id="mistyped"),
]


@pytest.mark.parametrize("damage", DAMAGED)
def test_the_compare_page_with_a_run_that_has_one_damaged_line(
    pair: tuple[Path, Path], tmp_path: Path, damage: object
) -> None:
    first, second = _copy(pair, tmp_path)
    lines = second.read_text().splitlines()
    middle = next(k for k in range(len(lines) // 2, len(lines)) if '"kind":"message"' in lines[k])
    lines[middle] = damage(lines[middle])  # type: ignore[operator]
    second.write_text("\n".join(lines) + "\n")
    client = _client(first.parent)
    runs = [("run", "examine.jsonl"), ("run", "skeptic.jsonl")]
    page = client.get("/compare", params=runs)
    assert page.status_code == 200, page.text[-2000:]
    for item in ("paris", "rome"):
        side = client.get("/compare/item", params=[*runs, ("item", item)])
        assert side.status_code in (200, 404), side.text[-2000:]
    assert client.get("/compare/chart/agreement.svg", params=runs).status_code == 200
    for url, status in _pages("skeptic.jsonl", client):
        assert status == 200, url
    for sid in ("paris", "rome"):
        assert client.get(f"/run/skeptic.jsonl/session/{sid}").status_code in (200, 404)


def test_a_header_with_a_field_of_a_newer_schema(pair: tuple[Path, Path], tmp_path: Path) -> None:
    first, second = _copy(pair, tmp_path)
    lines = second.read_text().splitlines()
    header = json.loads(lines[0])
    assert header["kind"] == "header"
    header["quantum_budget"] = {"qubits": 3}
    lines[0] = json.dumps(header)
    second.write_text("\n".join(lines) + "\n")
    client = _client(first.parent)
    for url, status in _pages("skeptic.jsonl", client):
        assert status == 200, url
    run = client.get("/run/skeptic.jsonl")
    assert "quantum_budget" in run.text  # the unknown field is named
    assert "paris" in run.text and "rome" in run.text  # what is readable is shown
    assert client.get("/run/skeptic.jsonl/session/paris").status_code == 200
    compare = client.get("/compare", params=[("run", "examine.jsonl"), ("run", "skeptic.jsonl")])
    assert compare.status_code == 200


def _forge(path: Path, edit: object) -> None:
    """The index beside ``path`` rewritten by ``edit``, keeping its size, time and digest of the file: well typed,
    and agreeing with the transcript in everything a refresh compares."""
    TranscriptIndex(path).refresh()
    with contextlib.closing(sqlite3.connect(default_store(path))) as con, con:
        rows = [[aid, *json.loads(row)] for aid, row in con.execute("SELECT aid, row FROM rows ORDER BY aid")]
        data = {
            "attempts": [row[1:] for row in rows],
            "headers": [list(h) for h in con.execute("SELECT rid, pos, length FROM headers ORDER BY n")],
            "mtime_ns": int(con.execute("SELECT v FROM meta WHERE k = 'mtime_ns'").fetchone()[0]),
        }
        edit(data)  # type: ignore[operator]
        for (aid, *_), row in zip(rows, data["attempts"], strict=True):
            con.execute("UPDATE rows SET row = ? WHERE aid = ?", (json.dumps(row), aid))
        con.execute("DELETE FROM headers")
        con.executemany("INSERT INTO headers(rid, pos, length) VALUES (?, ?, ?)", data["headers"])
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, data["mtime_ns"]))


def _shift(data: dict[str, object]) -> None:
    for row in data["attempts"]:  # type: ignore[attr-defined]
        spans = row[2]
        row[2] = ";".join(f"{int(o) + 7},{n}" for o, n in (s.split(",") for s in spans.split(";"))) if isinstance(
            spans, str
        ) else [[o + 7, n] for o, n in spans]


def _swap(data: dict[str, object]) -> None:
    rows = data["attempts"]  # type: ignore[assignment]
    rows[0][2], rows[-1][2] = rows[-1][2], rows[0][2]  # type: ignore[index]


def _huge(data: dict[str, object]) -> None:
    for row in data["attempts"]:  # type: ignore[attr-defined]
        row[2] = f"0,{10**14}"


def _headers(data: dict[str, object]) -> None:
    data["headers"] = [[h[0], h[1] + 3, h[2]] for h in data["headers"]]  # type: ignore[attr-defined]


@pytest.mark.parametrize("edit", [_shift, _swap, _huge, _headers], ids=["shifted", "swapped", "huge", "headers"])
def test_a_well_typed_forged_index_is_rebuilt(pair: tuple[Path, Path], tmp_path: Path, edit: object) -> None:
    first, second = _copy(pair, tmp_path)
    _forge(second, edit)
    client = _client(first.parent)
    for url, status in _pages("skeptic.jsonl", client):
        assert status == 200, url
    for sid in ("paris", "rome"):
        page = client.get(f"/run/skeptic.jsonl/session/{sid}")
        assert page.status_code == 200 and sid.capitalize() in page.text, page.text[-2000:]
    compare = client.get("/compare", params=[("run", "examine.jsonl"), ("run", "skeptic.jsonl")])
    assert compare.status_code == 200 and '<td class="num agreement">50.0%</td>' in compare.text
