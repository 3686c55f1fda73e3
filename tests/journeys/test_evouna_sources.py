"""Issue 52's acceptance on real data: an EVOUNA NQ lexical run (DPR-FiD, 3,020 human judgments) with 10 items of
one review queue labelled by two people, three of them tied. ``report --json`` carries the dataset's human
judgments and the people's labels side by side, each with its own n, the ties counted."""

from __future__ import annotations

from pathlib import Path

from tests.journeys.helpers import cli, cli_json
from voirdire.certificate import read_run, sample_lines
from voirdire.transcript import HumanLabel, LabelSample, append_label


def test_ten_labels_sit_beside_the_3020_judgments(shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "nq_fid.jsonl"
    cli("run", "qa_lexical", "--data", str(shared_data / "evouna" / "NQ.json"), "--system", "fid",
        "--out", str(out), "--no-progress")  # fmt: skip
    run = read_run(out)
    decision = {s.session_id: s.decision for s in run.sessions}
    for n, line in enumerate(sample_lines(run, 10, 1)):
        sid = line["session_id"]
        for who, word in (("ann", "correct"), ("bob", "correct" if n < 7 else "incorrect")):
            reading = "agree" if word == decision[sid] else "disagree"
            append_label(out, HumanLabel(item_id=line["item_id"], session_id=sid, verdict=decision[sid],
                                         reading=reading, label=word, annotator=who,
                                         sample=LabelSample(size=10, seed=1)))  # fmt: skip
    sources = cli_json("report", str(out), "--json")["certificate"]["sources"]
    gold, people = sources
    assert (gold["kind"], gold["name"]) == ("gold", "the dataset's human judgments")
    assert gold["calibration"]["agreement"]["items"] == 3020
    assert round(gold["calibration"]["agreement"]["accuracy"]["estimate"], 3) == 0.897  # Table 1, Lexical Match
    assert (people["kind"], people["name"]) == ("people", "people's labels")
    assert people["calibration"]["agreement"]["items"] == 7 and len(people["calibration"]["ties"]) == 3
    assert people["calibration"]["people"]["items"] == 10 and "n = 7 < 30" in people["small"]
    assert "7 of the 10 drawn items labelled (3 ties" in people["calibration"]["assumptions"][1]
