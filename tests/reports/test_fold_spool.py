"""LMvLM's report keeps its per-session values out of memory (docs/performance.md, flat memory): the fold pickles
each session's row and Table 8 numbers to a temporary file as the session ends, and the report reads them back
where its rows are shown. The report's text and JSON are those of the same fold holding its values in memory, for a
multi-session run with repeats, gold answers, follow-up iterations, Majority margins, an error and a resumed
session; Table 8's intervals from per-claim sums are those of ``bootstrap_means`` on per-claim lists."""

from __future__ import annotations

import dataclasses
import json
import pickle
import random
from pathlib import Path

from voirdire.certificate import bootstrap_means, proportion
from voirdire.protocols.cross_examination.scoring import report as lmvlm_fold
from voirdire.reports import report_file
from voirdire.reports.spool import Spool, Values
from voirdire.transcript import ErrorEvent, Guarantee, RunHeader, SessionStart, TranscriptWriter, Verdict, load


def _exam(rng: random.Random) -> dict[str, object]:
    per_iteration = [rng.randint(1, 4) for _ in range(rng.randint(1, 3))]
    decision = rng.choice(["correct", "incorrect", "inconclusive"])
    return {"decision": decision, "questions_per_iteration": per_iteration, "followup_iterations":
            len(per_iteration) - 1, "n_questions": sum(per_iteration)}  # fmt: skip


def lmvlm_transcript(path: Path, claims: int = 40, seed: int = 7) -> Path:
    """A cross-examination transcript: claims with 1 or 3 examinations, some repeated (``@r1``, ``@r2``), some
    with gold answers, one session ending in an error, one resumed by a second run."""
    rng = random.Random(seed)
    with TranscriptWriter(path) as w:
        for run in ("r1", "r2"):
            w.write(RunHeader(run_id=run, protocol="cross_examination"))
            for k in range(claims if run == "r1" else 1):
                item = {"id": f"c{k}", "claim": f"The capital of Country{k} is City{k}.",
                        "answers": [f"City{k}"] if k % 3 else []}  # fmt: skip
                for sid in [f"c{k}@r1", f"c{k}@r2"] if k % 5 == 0 else [f"c{k}"]:
                    w.write(SessionStart(run_id=run, session_id=sid, seq=1, item_id=f"c{k}", item=item))
                    if k == 4 and run == "r1":
                        w.write(ErrorEvent(run_id=run, session_id=sid, seq=2, error_type="RuntimeError",
                                           message="the endpoint went away"))  # fmt: skip
                        continue
                    exams = [_exam(rng) for _ in range(3 if k % 4 == 1 else 1)]
                    said = str(item["claim"]) if rng.random() < 0.5 else f"City{k + 1} is the capital of Country{k}."
                    rejected = sum(e["decision"] != "correct" for e in exams) * 2 > len(exams)
                    guarantee = None
                    if len(exams) == 3:
                        margin = f"{max(2, len(exams) - 1)}–{min(1, len(exams) - 2)}"
                        guarantee = Guarantee(kind="vote_margin", statement="majority", values={"margin": margin})
                    w.write(Verdict(run_id=run, session_id=sid, seq=2, decision="incorrect" if rejected else "correct",
                                    accepted=not rejected, guarantee=guarantee,
                                    statistics={"claim": said, "examinations": exams}))  # fmt: skip
    return path


def test_the_spooled_report_is_the_in_memory_report(tmp_path: Path) -> None:
    path = lmvlm_transcript(tmp_path / "t.jsonl")
    spooled, builder = report_file(path, lmvlm_fold)
    assert isinstance(builder._values, Spool) and isinstance(spooled.rows, Values)  # nothing per session held
    in_memory, kept = report_file(path, dataclasses.replace(lmvlm_fold, spooled=False))
    assert not isinstance(kept._values, Spool) and isinstance(in_memory.rows, list)
    assert spooled.text() == in_memory.text()
    assert spooled.model_dump_json() == in_memory.model_dump_json()
    assert json.dumps(spooled.model_dump(mode="json"), indent=2) == json.dumps(in_memory.model_dump(mode="json"),
                                                                                indent=2)  # fmt: skip
    assert spooled.rows == in_memory.rows and len(spooled.rows) == spooled.sessions == 48
    assert spooled.rows[3] == in_memory.rows[3] and spooled.rows[-2:] == in_memory.rows[-2:]
    assert pickle.loads(pickle.dumps(spooled.rows)) == in_memory.rows  # pickles (and copies) as a list
    assert spooled.model_copy(deep=True).rows == in_memory.rows
    assert spooled.margins and spooled.scored and spooled.examination is not None
    assert "Table 8 · # of follow-up questions per iteration" in spooled.intervals


def test_table8_intervals_from_sums_are_those_of_the_claims_lists(tmp_path: Path) -> None:
    """The Table 8 intervals are computed from each claim's sums and counts; here again from each claim's list of
    observations, as ``bootstrap_means`` and ``proportion`` take them."""
    path = lmvlm_transcript(tmp_path / "t.jsonl", claims=60, seed=11)
    report, _ = report_file(path, lmvlm_fold)
    by_claim: dict[str, list[tuple[int, list[int], int, bool]]] = {}
    for s in load(path).sessions.values():
        if s.verdict is not None:
            for e in s.verdict.statistics["examinations"]:
                ex = (e["n_questions"], e["questions_per_iteration"], e["followup_iterations"],
                      e["decision"] == "inconclusive")  # fmt: skip
                by_claim.setdefault(str(s.item_id), []).append(ex)
    groups = list(by_claim.values())
    expected = {
        "Table 8 · # of questions": bootstrap_means("mean", [[float(e[0]) for e in g] for g in groups]),
        "Table 8 · # of follow-up questions per iteration": bootstrap_means(
            "mean", [[float(q) for e in g for q in e[1][1:]] for g in groups]
        ),
        "Table 8 · # of follow-up iterations": bootstrap_means("mean", [[float(e[2]) for e in g] for g in groups]),
        "Table 8 · # of questions per iteration": bootstrap_means(
            "mean", [[float(q) for e in g for q in e[1]] for g in groups]
        ),
        "Table 8 · inconclusive": proportion("inconclusive", [[e[3] for e in g] for g in groups]),
    }
    for name, interval in expected.items():
        assert report.intervals[name] == interval, name
    assert report.intervals["Table 8 · inconclusive"].method.startswith("bootstrap")  # claims with 3 examinations


def test_a_spool_replaces_a_value_and_reads_none_where_nothing_was_put() -> None:
    spool = Spool(2)
    spool.put(1, {"a": 1})
    spool.add()
    spool.put(1, {"a": 2})  # a later attempt that counts
    spool.put(2, ("x", 3))
    assert len(spool) == 3 and spool.get(0) is None
    view = spool.view([2, 1, 0])
    assert list(view) == [("x", 3), {"a": 2}, None] and view[1] == {"a": 2} and view[0:2] == [("x", 3), {"a": 2}]
    assert view.map(lambda v: v is None) == [False, False, True]


def test_a_spool_written_after_a_read_appends_and_reads_back_every_value() -> None:
    # A value put after a read goes to the file's end, not where the read left the file's position (after the value
    # read: here the first of three, so a put there would overwrite the second).
    spool = Spool(4)
    spool.put(0, "first")
    spool.put(1, ("second", 2))
    spool.put(2, {"third": [3]})
    assert spool.get(0) == "first"
    spool.put(0, "first, again")  # a later attempt that counts, after a read
    assert spool.get(1) == ("second", 2)
    spool.put(3, None)
    assert list(spool.view(range(4))) == ["first, again", ("second", 2), {"third": [3]}, None]


def test_the_rows_alone_are_the_finished_reports_rows(tmp_path: Path) -> None:
    # ReportFold.rows (the viewer's gold check) reads each session's row from its value, computing no statistic;
    # they are the rows of the finished report, gold included.
    transcript = load(lmvlm_transcript(tmp_path / "cx.jsonl"))
    assert lmvlm_fold.row is not None
    rows = lmvlm_fold.rows(transcript)
    assert rows == list(lmvlm_fold(transcript, ci=0).rows)
    assert {r.get("gold") for r in rows} >= {True, False} and len(rows) == len(transcript.sessions)
    no_row = dataclasses.replace(lmvlm_fold, row=None)  # a fold without the hook: the report is finished
    assert no_row.rows(transcript) == rows
