"""The labels sidecar: appended durably beside the transcript, a torn last line cut on the next write, the transcript
never touched, a later label of one annotator superseding an earlier one, concurrent writers never tearing a line."""

from __future__ import annotations

import json
import multiprocessing
import os
import stat
from pathlib import Path

import pytest

from voirdire.base import CannotWrite
from voirdire.transcript import (
    HumanLabel,
    LabelSample,
    SidecarError,
    append_label,
    clean_text,
    current_labels,
    read_sidecar,
    sidecar_path,
    why_not_writable,
)


def label(item: str = "a", who: str = "ann", reading: str = "agree", text: str = "correct") -> HumanLabel:
    return HumanLabel(item_id=item, session_id=item, verdict="correct", reading=reading,  # type: ignore[arg-type]
                      label=None if reading == "unsure" else text, annotator=who)  # fmt: skip


def transcript(tmp_path: Path) -> Path:
    t = tmp_path / "run.jsonl"
    t.write_text('{"kind": "header"}\n', encoding="utf-8")
    return t


def test_append_writes_one_line_each_beside_and_leaves_the_transcript_alone(tmp_path: Path) -> None:
    t = transcript(tmp_path)
    before = t.read_bytes(), t.stat().st_mtime_ns
    side = append_label(t, label("a"))
    append_label(t, label("b", reading="unsure"))
    assert side == sidecar_path(t) == tmp_path / "run.jsonl.labels.jsonl"
    lines = side.read_text(encoding="utf-8").splitlines()
    assert [json.loads(x)["item_id"] for x in lines] == ["a", "b"]
    assert json.loads(lines[1])["label"] is None
    assert (t.read_bytes(), t.stat().st_mtime_ns) == before
    assert [x.item_id for x in read_sidecar(t)] == ["a", "b"]


def test_a_later_label_supersedes_but_both_are_kept(tmp_path: Path) -> None:
    t = transcript(tmp_path)
    append_label(t, label("a", text="correct"))
    append_label(t, label("a", who="bob", text="correct"))
    append_label(t, label("a", reading="disagree", text="incorrect"))
    everything = read_sidecar(t)
    assert len(everything) == 3
    now = current_labels(everything)
    assert now[("a", "ann")].label == "incorrect" and now[("a", "bob")].label == "correct"


def test_a_torn_last_line_is_skipped_on_read_and_cut_on_the_next_write(tmp_path: Path) -> None:
    t = transcript(tmp_path)
    append_label(t, label("a"))
    side = sidecar_path(t)
    with open(side, "ab") as fh:
        fh.write(b'{"item_id": "half", "sess')
    assert [x.item_id for x in read_sidecar(t)] == ["a"]
    append_label(t, label("b"))
    text = side.read_text(encoding="utf-8")
    assert "half" not in text and text.endswith("\n")
    assert [x.item_id for x in read_sidecar(t)] == ["a", "b"]


def test_a_bad_line_inside_is_an_error_naming_file_and_line(tmp_path: Path) -> None:
    t = transcript(tmp_path)
    sidecar_path(t).write_text('{"nope": 1}\n' + label("a").model_dump_json() + "\n", encoding="utf-8")
    with pytest.raises(SidecarError, match=r"run\.jsonl\.labels\.jsonl:1: not a label line"):
        read_sidecar(t)


def test_labels_are_validated_and_text_cleaned() -> None:
    with pytest.raises(ValueError):
        HumanLabel(item_id="a", session_id="a", reading="maybe", annotator="x")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        HumanLabel(item_id="a", session_id="a", reading="agree", annotator="x" * 81)
    with pytest.raises(ValueError):
        LabelSample(size=0, seed=1)
    assert clean_text("  ok\x1b[2J\u202e  ", 80) == "ok␛[2J<U+202E>"
    assert clean_text("line one\r\nline two", 80) == "line one\nline two"
    assert clean_text("x" * 100, 10) == "x" * 10


def _writer(path: str, who: str, n: int) -> None:
    for i in range(n):
        append_label(path, label(f"item-{i}", who=who, text="correct " + "y" * 3000))


def test_two_writers_at_once_keep_every_line_whole(tmp_path: Path) -> None:
    t = transcript(tmp_path)
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(t), who, 40)) for who in ("tab1", "tab2")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    read = read_sidecar(t)
    assert len(read) == 80
    assert {x.annotator for x in read} == {"tab1", "tab2"}
    assert sidecar_path(t).read_bytes().endswith(b"\n")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_folder_says_why_and_cannot_be_written(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    t = transcript(folder)
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        why = why_not_writable(t)
        assert why is not None and "read-only" in why
        with pytest.raises(CannotWrite, match="labels"):
            append_label(t, label("a"))
        assert not sidecar_path(t).exists()
    finally:
        folder.chmod(stat.S_IRWXU)
    assert why_not_writable(t) is None
