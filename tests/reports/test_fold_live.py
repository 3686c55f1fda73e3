"""The end-of-run report of ``voirdire run`` is folded from the records as the writer appends them (issue 32 item 2):
for runs of several protocols on scripted models -- one whose replies cannot be parsed among them -- the report
folded live equals the report read back from the same transcript, text and fields. A resumed run (its file already
held sessions) reads the file back, so it still reports the whole transcript."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.protocols.dcr.helpers import pairs_file
from tests.protocols.dcr.test_cli import scripts as dcr_scripts
from tests.protocols.qa_entailment.test_cli import FIXTURE, entailment_setup
from voirdire.cli import main, run as cli_run
from voirdire.registry import get
from voirdire.reports import DEFAULT_DECIDED_AT, LiveReport, load_prices, report_file
from voirdire.reports.report import DEFAULT_CI
from voirdire.transcript import load


class Watch:
    """What ``voirdire run`` used for its report: the live folds it made, and its read-backs."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.live: list[tuple[Any, Any]] = []  # (result, the fold)
        self.read_back: list[tuple[Path, Any]] = []  # (path, the report read back)
        watch = self

        class Recorded(LiveReport):
            def result(self, path: str | Path, *, started: int | None = None) -> Any:
                found = super().result(path, started=started)
                watch.live.append((found, self))
                return found

        def spy(path: str | Path, *args: Any, **kw: Any) -> Any:
            found = report_file(path, *args, **kw)
            watch.read_back.append((Path(path), found[0]))
            return found

        monkeypatch.setattr(cli_run, "LiveReport", Recorded)
        monkeypatch.setattr(cli_run, "report_file", spy)


@pytest.fixture
def watch(monkeypatch: pytest.MonkeyPatch) -> Watch:
    return Watch(monkeypatch)


def same_as_read_back(watch: Watch, out: Path) -> Any:
    """The run's report came from the live fold (no read-back) and equals the read-back of its transcript."""
    assert watch.read_back == []
    (found, _), = watch.live
    assert found is not None
    live, builder = found
    header = load(out).header
    assert header is not None
    again, again_builder = report_file(out, get(header.protocol).fold, prices=load_prices())
    assert live.text() == again.text()
    assert live.model_dump_json() == again.model_dump_json()
    assert builder.session_ids() == again_builder.session_ids()
    assert live.sessions == len(load(out).sessions) > 0
    return live


def test_nodata_with_unparseable_replies(shared_data: Path, tmp_path: Path, watch: Watch, monkeypatch) -> None:
    root = shared_data / "no_data_algorithm"
    monkeypatch.setenv("VOIRDIRE_NO_DATA_DIR", str(root))
    rows = json.loads((root / "other_data_test_with_xor.json").read_text())[:4]
    small = tmp_path / "other_small.json"
    small.write_text(json.dumps(rows))
    script = tmp_path / "evaluator.json"
    script.write_text(json.dumps({"default": "Let me think about the rubric first."}))  # never a label
    out = tmp_path / "t.jsonl"
    args = ["nodata", "--data", str(small), "--rubric", "oop", "--evaluator", "llm", "--rounds", "1",
            "--model", f"evaluator=scripted:{script}", "--out", str(out), "--no-progress"]  # fmt: skip
    assert main(args) == 0
    live = same_as_read_back(watch, out)
    assert live.parse_failures["evaluator · no_data/evaluate"] == 20  # every reply unreadable, recorded


def test_dcr_pairs(tmp_path: Path, watch: Watch) -> None:
    data = pairs_file(tmp_path)
    out = tmp_path / "t.jsonl"
    args = ["dcr", "--data", str(data), *dcr_scripts(tmp_path), "--out", str(out), "--no-progress", "--rounds", "0"]
    assert main(args) == 0
    assert same_as_read_back(watch, out).verdicts == 2


def test_qa_entailment_on_a_scripted_evaluator(tmp_path: Path, watch: Watch) -> None:
    data, script = entailment_setup(tmp_path)
    out = tmp_path / "ent.jsonl"
    args = ["qa-eval", "--data", str(data), "--evaluator", "entailment", "--model", f"evaluator=scripted:{script}"]
    assert main([*args, "--out", str(out), "--partial-marks", "--no-progress"]) == 0
    same_as_read_back(watch, out)


def test_a_resumed_run_reads_its_transcript_back_and_reports_all_of_it(tmp_path: Path, watch: Watch) -> None:
    out = tmp_path / "lex.jsonl"
    args = ["qa-eval", "--data", str(FIXTURE), "--evaluator", "lexical", "--out", str(out), "--no-progress"]
    assert main([*args, "--limit", "5"]) == 0
    first = same_as_read_back(watch, out)
    assert first.sessions == 5
    assert main([*args, "--limit", "10"]) == 0  # resumes: five sessions were already in the file
    assert len(watch.live) == 1  # the resumed run took no live report
    ((path, report),) = watch.read_back
    assert path == out and report.sessions == 10  # the whole run, the first command's sessions too
    header = load(out).header
    assert header is not None
    again, _ = report_file(out, get(header.protocol).fold, prices=load_prices())
    assert report.text() == again.text()


def test_dcr_pairs_in_two_processes(tmp_path: Path, watch: Watch, monkeypatch: pytest.MonkeyPatch) -> None:
    """--workers: a forked worker folds each of its sessions' part of the report and sends it with the session's
    lines; the run's process folds it as it writes them, and reads nothing back. (A worker started as a new
    interpreter has no live report: the run reads its file back.)"""
    from voirdire.executors import local

    monkeypatch.setattr(local, "_can_fork", lambda: True)  # as in a run's process (pytest may leave idle threads)
    data = pairs_file(tmp_path)
    out = tmp_path / "t.jsonl"
    args = ["dcr", "--data", str(data), *dcr_scripts(tmp_path), "--out", str(out), "--no-progress", "--rounds", "0"]
    assert main([*args, "--workers", "2", "--concurrency", "1"]) == 0
    assert same_as_read_back(watch, out).verdicts == 2


def test_records_from_worker_processes_are_read_back(tmp_path: Path, watch: Watch) -> None:
    """--workers: a worker's part of the report that does not pickle (qa's values hold a mappingproxy) is not
    sent; the parent writes that session's records as text, which the live fold does not see: it says it missed
    them and the run reads its file back."""
    out = tmp_path / "lex.jsonl"
    args = ["qa-eval", "--data", str(FIXTURE), "--evaluator", "lexical", "--out", str(out), "--no-progress"]
    assert main([*args, "--limit", "12", "--workers", "2", "--concurrency", "1"]) == 0
    ((found, fold),) = watch.live
    assert found is None and fold.missed
    ((path, report),) = watch.read_back
    assert path == out and report.sessions == 12


def test_a_line_written_as_text_or_a_masked_record_is_a_miss(tmp_path: Path) -> None:
    from voirdire.executors import MaskingWriter
    from voirdire.transcript import RunHeader, observing

    out = tmp_path / "t.jsonl"
    header = RunHeader(run_id="r1", protocol="qa_lexical")
    for write in ("plain", "text", "secret"):
        live = LiveReport(None, prices=load_prices(), ci=DEFAULT_CI, decided_at=DEFAULT_DECIDED_AT)
        with observing(out, live), MaskingWriter(out) as writer:
            if write == "plain":
                writer.write(header)
            elif write == "text":
                writer.write_line(header.model_dump_json())
            else:
                writer.write(header.model_copy(update={"command": ["run", "--key=sk-" + "a" * 40]}))
        assert live.missed is (write != "plain"), write
        assert (live.result(out) is None) is (write != "plain")


def test_a_writer_opened_before_observing_leaves_nothing_seen_and_the_file_is_read_back(tmp_path: Path) -> None:
    from voirdire.executors import MaskingWriter
    from voirdire.transcript import RunHeader, observing

    out = tmp_path / "t.jsonl"
    live = LiveReport(None, prices=load_prices(), ci=DEFAULT_CI, decided_at=DEFAULT_DECIDED_AT)
    with MaskingWriter(out) as writer, observing(out, live):
        writer.write(RunHeader(run_id="r1", protocol="qa_lexical"))
    assert out.stat().st_size > 0 and not live.missed
    assert live.result(out) is None  # an empty fold of a written file is no report: the caller reads it back


def test_a_fresh_run_over_an_old_transcript_is_folded_live(tmp_path: Path, watch: Watch) -> None:
    """--fresh starts the file over, so nothing of the old run is in it: the live fold is the file's report."""
    out = tmp_path / "lex.jsonl"
    args = ["qa-eval", "--data", str(FIXTURE), "--evaluator", "lexical", "--out", str(out), "--no-progress"]
    assert main([*args, "--limit", "10"]) == 0
    watch.live.clear()
    assert main([*args, "--limit", "4", "--fresh"]) == 0
    assert same_as_read_back(watch, out).sessions == 4  # the old run's ten sessions are gone with it
