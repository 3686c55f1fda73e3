"""What a report keeps per session, by structure (docs/performance.md, flat memory): LMvLM's report holds the
fold's own row of each session, not a second, validated copy of every row made at the end of a run."""

from __future__ import annotations

import json
from array import array
from pathlib import Path

import pytest

from voirdire.base import Column
from voirdire.protocols.cross_examination.scoring import Report, Scored, _finish


def test_the_report_rows_are_the_folds_rows_not_copies() -> None:
    values = [
        Scored({"id": f"c{k}", "claim": f"Claim {k}.", "decision": "correct", "accepted": True, "gold": k % 2 == 0},
               ((2, (2,), 0, False),))
        for k in range(4)
    ]  # fmt: skip
    report = _finish(values, "cross_examination", {"sessions": 4, "verdicts": 4}, ci=0.0)
    assert all(row is value.row for row, value in zip(report.rows, values, strict=True))
    again = Report.model_validate_json(report.model_dump_json())  # the JSON and its schema are as before
    assert again.rows == [value.row for value in values]
    assert json.loads(report.model_dump_json())["rows"][1] == {"id": "c1", "claim": "Claim 1.", "decision": "correct",
                                                               "accepted": True, "gold": False}  # fmt: skip
    assert Report.model_json_schema()["properties"]["rows"]["items"]["type"] == "object"


def test_the_fold_keeps_sessions_as_columns(tmp_path: Path) -> None:
    """No object per session beyond the protocol's value: places in arrays, run ids and counts shared; a session
    resumed by a second run is kept once, by the attempt that counts (its verdict)."""
    from voirdire.reports import report_file
    from voirdire.transcript import ErrorEvent, RunHeader, SessionStart, TranscriptWriter, Verdict

    path = tmp_path / "t.jsonl"
    with TranscriptWriter(path) as w:
        for run, sessions in (("r1", ["s1", "s2", "s3"]), ("r2", ["s2"])):
            w.write(RunHeader(run_id=run, protocol="unregistered"))
            for k, sid in enumerate(sessions):
                w.write(SessionStart(run_id=run, session_id=sid, seq=1, item_id=sid, item={"n": k}))
                if run == "r1" and sid == "s2":
                    w.write(ErrorEvent(run_id=run, session_id=sid, seq=2, error_type="RuntimeError", message="boom"))
                else:
                    w.write(Verdict(run_id=run, session_id=sid, seq=2, decision="yes", accepted=True))
    report, builder = report_file(path)
    assert (report.sessions, report.verdicts, report.errors) == (3, 3, 0)
    assert builder.session_ids() == ["s1", "s2", "s3"] and builder._place == {"s1": 0, "s2": 1, "s3": 2}
    assert isinstance(builder._orders, array) and isinstance(builder._verdict, Column)
    assert list(builder._verdict) == [1, 1, 1] and builder._orders[1] == 3  # s2's second attempt, not its first
    assert builder._runs[0] is builder._runs[2] and builder._runs[1] == ("r1", "r2")  # equal tuples: one object
    assert builder._counts.typecode == "I" and builder._counts[0] == builder._counts[1] == builder._counts[2] != 0
    assert len(builder._count_table) == 3  # none yet, s2's first attempt (its error), the one the three share


def test_a_runs_live_report_drops_the_places_before_its_finish(tmp_path: Path) -> None:
    """At a run's end (``LiveReport.result``) nothing more is added: the ids' places and the columns the counts came
    from are dropped before the protocol's finish computes its intervals; the ids stay, in order, and the report is
    the one read back. A record written after the report marks it missed (the caller would read the file back)."""
    from voirdire.reports import DEFAULT_DECIDED_AT, LiveReport, load_prices, report_file
    from voirdire.transcript import RunHeader, SessionStart, TranscriptWriter, Verdict, iter_records

    path = tmp_path / "t.jsonl"
    with TranscriptWriter(path) as w:
        w.write(RunHeader(run_id="r1", protocol="unregistered"))
        for k, sid in enumerate(["b", "a", "c"]):
            w.write(SessionStart(run_id="r1", session_id=sid, seq=1, item_id=sid, item={"n": k}))
            w.write(Verdict(run_id="r1", session_id=sid, seq=2, decision="yes", accepted=k != 1))
    live = LiveReport(None, prices=load_prices(), ci=0.95, decided_at=DEFAULT_DECIDED_AT)
    for record in iter_records(path):
        live(record)
    found = live.result(path)
    assert found is not None
    report, builder = found
    assert builder._place == {} and len(builder._runs) == len(builder._counts) == len(builder._orders) == 0
    assert builder.session_ids() == ["b", "a", "c"]
    assert report.model_dump_json() == report_file(path)[0].model_dump_json()
    live(Verdict(run_id="r1", session_id="d", seq=2, decision="yes", accepted=True))
    assert live.missed and live.result(path) is None


def test_a_runs_live_report_keeps_a_place_only_while_its_session_is_open(tmp_path: Path) -> None:
    """A run's own new file (``LiveReport``: one attempt a session) keeps a session's place only while the session
    is open, and the ids compactly (``IdList``), in order of first appearance; the report is the one read back."""
    from voirdire.base import IdList
    from voirdire.reports import DEFAULT_DECIDED_AT, LiveReport, load_prices, report_file
    from voirdire.reports.fold import ReportBuilder
    from voirdire.transcript import ErrorEvent, RunHeader, SessionStart, TranscriptWriter, Verdict, iter_records

    path = tmp_path / "t.jsonl"
    with TranscriptWriter(path) as w:
        w.write(RunHeader(run_id="r1", protocol="unregistered"))
        for sid in ("s1", "s2", "s3"):  # three in flight at once, ending in another order
            w.write(SessionStart(run_id="r1", session_id=sid, seq=1, item_id=sid, item={"n": sid}))
        w.write(Verdict(run_id="r1", session_id="s2", seq=2, decision="yes", accepted=True))
        w.write(ErrorEvent(run_id="r1", session_id="s3", seq=2, error_type="RuntimeError", message="boom"))
        w.write(Verdict(run_id="r1", session_id="s1", seq=2, decision="no", accepted=False))
    live = LiveReport(None, prices=load_prices(), ci=0.95, decided_at=DEFAULT_DECIDED_AT)
    open_places = []
    for record in iter_records(path):
        live(record)
        open_places.append(sorted(live.builder._place))
    assert open_places[-4:] == [["s1", "s2", "s3"], ["s1", "s3"], ["s1"], []]
    assert isinstance(live.builder.session_ids(), IdList) and live.builder.session_ids() == ["s1", "s2", "s3"]
    assert live.builder._runs == [] and len(live.builder._orders) == 0  # nothing to compare a second attempt with
    # the run started another number of sessions than the fold saw (a record after a session's end would be one
    # more): not the file's report, read back
    assert live.result(path, started=4) is None and live.result(path, started=2) is None
    found = live.result(path, started=3)
    assert found is not None
    assert found[0].model_dump_json() == report_file(path)[0].model_dump_json()
    assert (found[0].sessions, found[0].verdicts, found[0].errors) == (3, 2, 1)
    with pytest.raises(ValueError, match="'once' reports every session"):
        ReportBuilder(None, only=["s1"], once=True)
