"""What happens on disk while the viewer serves a run never makes it answer 500: a header it cannot read, a run
overwritten with random bytes, a run and its index files deleted and another file put in its place, a run moved
away under a live page's version probe. Each page says what is wrong with the run (or 404 when it is gone), and the
index repairs itself when its file changes identity."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from tests.web.test_search import write_run
from voirdire.web.app import create_app
from voirdire.web.catalog import Library

PAGES = ("/", "/run/{k}", "/run/{k}/session/i1", "/run/{k}/report", "/run/{k}/charts",
         "/compare?run=a.jsonl&run={k}", "/search?q=river", "/api/version?page=run&key={k}",
         "/api/version?page=session&key={k}&session=i1")  # fmt: skip


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, TestClient]:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = tmp_path / "runs"
    folder.mkdir()
    for name, seed in (("a.jsonl", 1), ("b.jsonl", 2)):
        write_run(folder / name, "dcr", ("checker", "judge"), [f"i{n}" for n in range(20)], seed)
    client = TestClient(create_app(Library([folder])), base_url="http://127.0.0.1", raise_server_exceptions=False)
    for page in PAGES:  # every page served once: the indexes are built and on disk
        assert client.get(page.format(k="b.jsonl")).status_code < 500, page
    return folder, client


def _statuses(client: TestClient) -> dict[str, int]:
    return {page: client.get(page.format(k="b.jsonl")).status_code for page in PAGES}


def test_a_header_with_a_schema_version_that_is_not_a_number(served: tuple[Path, TestClient]) -> None:
    folder, client = served
    lines = (folder / "b.jsonl").read_text().splitlines()
    header = json.loads(lines[0])
    header["schema_version"] = "2.1"
    (folder / "b.jsonl").write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    statuses = _statuses(client)
    assert all(code < 500 for code in statuses.values()), statuses
    page = client.get("/compare?run=a.jsonl&run=b.jsonl")
    assert page.status_code == 404 and "unreadable run header" in page.text


def test_a_served_run_overwritten_with_random_bytes(served: tuple[Path, TestClient]) -> None:
    folder, client = served
    (folder / "b.jsonl").write_bytes(random.Random(7).randbytes(30_000))
    statuses = _statuses(client)
    assert all(code < 500 for code in statuses.values()), statuses


def test_a_run_and_its_index_deleted_and_another_file_put_in_its_place(served: tuple[Path, TestClient]) -> None:
    folder, client = served
    for index in [*folder.glob(".b.jsonl*"), *(folder.parent / "cache").rglob("*.index")]:
        index.unlink()  # the viewer's open index file goes ("attempt to write a readonly database")
    (folder / "b.jsonl").unlink()
    write_run(folder / "b.jsonl", "dcr", ("checker", "judge"), ["j1", "j2"], 3)
    statuses = _statuses(client)
    assert all(code < 500 for code in statuses.values()), statuses
    sessions = client.get("/run/b.jsonl")
    assert sessions.status_code == 200 and "j1" in sessions.text and "i19" not in sessions.text  # indexed afresh


@pytest.mark.parametrize("how", ["moved", "deleted"])
def test_the_version_probe_of_a_run_moved_or_deleted(served: tuple[Path, TestClient], how: str) -> None:
    folder, client = served
    if how == "moved":
        (folder / "b.jsonl").rename(folder.parent / "elsewhere.jsonl")
    else:
        (folder / "b.jsonl").unlink()
    for probe in ("/api/version?page=run&key=b.jsonl", "/api/version?page=session&key=b.jsonl&session=i1"):
        answer = client.get(probe)
        assert answer.status_code == 404 and answer.json() == {"version": "gone"}
    statuses = _statuses(client)
    assert all(code < 500 for code in statuses.values()), statuses
