"""``voirdire.load(T)``'s frames and ``voirdire export``: one row per session, turn and verdict, with the item's
fields, models, tokens (the reports' tally), cost and labels; Parquet round trips every column."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import voirdire
from tests.integrations.helpers import CLAIMS, scripted_run
from voirdire.cli import main
from voirdire.registry import get
from voirdire.transcript import HumanLabel, append_label


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scripted_run(tmp_path_factory.mktemp("frames"))


def test_sessions_frame_has_a_row_per_session_with_items_models_tokens_and_cost(run: Path) -> None:
    t = voirdire.load(run)
    frame = t.sessions_frame()
    assert list(frame["session_id"]) == ["c0", "c1", "c2"] and list(frame["item.claim"]) == CLAIMS
    assert set(frame["model.examiner"]) == {t.header.roles["examiner"].spec}  # type: ignore[union-attr]
    assert list(frame["decision"]) == ["incorrect"] * 3 and not frame["accepted"].any()
    report = get("cross_examination").report(t)  # the reports' one tally of model calls
    usage = report.total_usage  # type: ignore[attr-defined]
    assert frame["prompt_tokens"].sum() == usage.prompt_tokens and frame["calls"].sum() == usage.calls
    assert list(frame["cost_usd"]) == [0.0, 0.0, 0.0]  # scripted models are free, not unknown
    assert "label" not in frame.columns  # no sidecar, no label columns


def test_turns_and_verdicts_frames(run: Path) -> None:
    t = voirdire.load(run)
    turns, sessions, verdicts = t.turns_frame(), t.sessions_frame(), t.verdicts_frame()
    one = turns[turns["session_id"] == "c0"]
    assert list(one["turn_index"]) == list(range(len(one)))
    assert one.iloc[1][["sender", "content"]].tolist() == ["examiner", "1. Where is it?"]
    # each call's tokens on one row only: a session's turns add up to its total
    by_session = turns.groupby("session_id")["prompt_tokens"].sum()
    assert by_session.to_dict() == dict(zip(sessions["session_id"], sessions["prompt_tokens"], strict=True))
    assert list(verdicts["decision"]) == ["incorrect"] * 3
    assert verdicts.iloc[0]["evidence"] == ["The claim is incorrect."]
    assert verdicts.iloc[0]["stat.rejections"] == 1
    examinations = json.loads(verdicts.iloc[0]["stat.examinations"])  # nested: JSON text
    assert examinations[0]["decision"] == "incorrect"


def test_labels_from_the_sidecar(tmp_path: Path) -> None:
    run = scripted_run(tmp_path, n=2)
    append_label(run, HumanLabel(item_id="c0", session_id="c0", verdict="incorrect", reading="agree",
                                 label="incorrect", annotator="ann", time="2026-01-01T00:00:00Z"))  # fmt: skip
    append_label(run, HumanLabel(item_id="c0", session_id="c0", verdict="incorrect", reading="disagree",
                                 label="correct", annotator="bo", time="2026-01-02T00:00:00Z"))  # fmt: skip
    frame = voirdire.load(run).sessions_frame().set_index("session_id")
    assert frame.loc["c0", "label"] == "correct" and frame.loc["c0", "label_annotators"] == 2
    assert pd.isna(frame.loc["c1", "label"]) and frame.loc["c1", "label_annotators"] == 0
    assert voirdire.load(run).verdicts_frame().set_index("session_id").loc["c0", "label_reading"] == "disagree"


def _plain(frame: pd.DataFrame) -> pd.DataFrame:
    """Arrays Parquet reads back as lists, for comparing cells."""
    return frame.apply(lambda c: c.map(lambda v: v.tolist() if hasattr(v, "tolist") and not isinstance(v, str) else v))


@pytest.mark.parametrize("table", ["sessions", "turns", "verdicts"])
def test_parquet_round_trip_keeps_every_column(run: Path, tmp_path: Path, table: str) -> None:
    out = tmp_path / f"{table}.parquet"
    assert main(["export", str(run), "--format", "parquet", "--table", table, "-o", str(out)]) == 0
    written = voirdire.load(run).frame(table)
    back = pd.read_parquet(out)
    assert list(back.columns) == list(written.columns)
    pd.testing.assert_frame_equal(_plain(back), _plain(written), check_dtype=False)


def test_csv_and_jsonl_exports(run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", str(run), "-o", str(tmp_path / "v.csv"), "--table", "verdicts"]) == 0
    assert "v.csv: 3 verdicts rows" in capsys.readouterr().out
    csv = pd.read_csv(tmp_path / "v.csv")
    assert list(csv["decision"]) == ["incorrect"] * 3 and json.loads(csv["evidence"][0]) == ["The claim is incorrect."]
    assert main(["export", str(run), "--format", "jsonl", "-o", str(tmp_path / "t.jsonl"), "--table", "turns"]) == 0
    rows = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert len(rows) == len(voirdire.load(run).turns_frame()) and rows[0]["sender"] == "moderator"


def test_export_errors_name_the_option(run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", str(run), "-o", str(tmp_path / "x.txt")]) == 2
    assert "--format: give parquet, csv, jsonl or html" in capsys.readouterr().err
    assert main(["export", str(run), "-o", str(tmp_path / "x.csv"), "--session", "c0"]) == 2
    assert "--session: only for --format html" in capsys.readouterr().err
    assert main(["export", str(tmp_path / "none.jsonl"), "-o", str(tmp_path / "x.csv")]) == 2
    assert "no such transcript" in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()


def test_export_html_is_the_viewer_page(run: Path, tmp_path: Path) -> None:
    assert main(["export", str(run), "--format", "html", "-o", str(tmp_path / "run.html")]) == 0
    page = (tmp_path / "run.html").read_text()
    assert "Paris is the capital of Germany." in page
