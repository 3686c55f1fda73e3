"""The viewer reads a transcript with a line far longer than any record can be (a 300 MB line, scaled down here
with ``VOIRDIRE_MAX_LINE_BYTES``) without holding it: the line is left out and named among the run's problems,
every page is served, and the memory the reading takes is bounded by the cap, not by the line."""

from __future__ import annotations

import shutil
import tracemalloc
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from tests.web.test_compare_browser import two_runs
from voirdire.transcript import TranscriptError, read_lines
from voirdire.web.app import create_app
from voirdire.web.catalog import Library
from voirdire.web.index import TranscriptIndex

CAP = 1 << 20  # 1 MiB
LONG = 24 << 20  # a line 24 times the cap


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder, scripts = tmp_path_factory.mktemp("long-lines"), tmp_path_factory.mktemp("long-lines-scripts")
    return two_runs(folder, scripts)


def _with_long_line(source: Path, target: Path) -> Path:
    """``source`` with a 24 MiB line (one JSON string of a message's shape) after its third line."""
    lines = source.read_bytes().splitlines(keepends=True)
    with target.open("wb") as fh:
        fh.writelines(lines[:3])
        fh.write(b'{"run_id":"x","session_id":"paris","kind":"message","text":"')
        for _ in range(LONG >> 20):
            fh.write(b"a" * (1 << 20))
        fh.write(b'"}\n')
        fh.writelines(lines[3:])
    return target


def test_the_index_leaves_a_too_long_line_out_in_bounded_memory(
    pair: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VOIRDIRE_MAX_LINE_BYTES", str(CAP))
    path = _with_long_line(pair[1], tmp_path / "long.jsonl")
    warm = TranscriptIndex(pair[1], persist=False)  # modules a first read imports are not the line's cost
    warm.refresh()
    warm.record("paris")
    index = TranscriptIndex(path, persist=False)
    tracemalloc.start()
    try:
        index.refresh()
        record = index.record("paris")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * CAP, f"{peak:,} bytes at the peak"  # the line is 24 MiB
    assert any(":4: a line of" in p and "left out" in p for p in index.problems), index.problems
    assert record is not None and record.events and {s.sid for s in index.sessions()} == {"paris", "rome"}


def test_reading_a_transcript_with_a_too_long_line_is_an_error_naming_it_in_bounded_memory(
    pair: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VOIRDIRE_MAX_LINE_BYTES", str(CAP))
    path = _with_long_line(pair[1], tmp_path / "long.jsonl")
    tracemalloc.start()
    try:
        with pytest.raises(TranscriptError, match=r"long\.jsonl:4: not a transcript record \(a line of 25,165,"):
            list(read_lines(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * CAP, f"{peak:,} bytes at the peak"


def test_every_page_is_served_beside_a_too_long_line(
    pair: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VOIRDIRE_MAX_LINE_BYTES", str(CAP))
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copy(pair[0], folder / "examine.jsonl")
    _with_long_line(pair[1], folder / "skeptic.jsonl")
    client = TestClient(create_app(Library([folder])), base_url="http://127.0.0.1", raise_server_exceptions=False)
    runs = client.get("/")
    assert runs.status_code == 200 and "left out" in runs.text
    for url in ("/run/skeptic.jsonl", "/run/skeptic.jsonl/session/paris", "/run/skeptic.jsonl/report",
                "/run/skeptic.jsonl/charts"):  # fmt: skip
        assert client.get(url).status_code == 200, url
    page = client.get("/compare", params=[("run", "examine.jsonl"), ("run", "skeptic.jsonl")])
    assert page.status_code == 200
