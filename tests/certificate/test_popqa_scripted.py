"""Issue 29's acceptance on PopQA, tied to the pipeline: a scripted examiner right with probability 0.8 on a
seeded schedule examines 40 PopQA claims (LMvLM through ``voirdire examine``); the accuracy ``voirdire calibrate``
reports against the protocol's gold (§4.1's alias match) is the schedule's, with the very interval the 400-run
coverage simulation (``tests/certificate/test_coverage.py``) checks at the statistics level, and the run's report
carries the same figures in its certificate section.

Each claim states the item's answer (a true claim) or another item's (a false one), half and half by a seeded
coin; the examiner asks one question naming the item, the examinee's answer names it back, and the examiner's
decision (after the answers, ``--max-followups 0``) is the gold one where the schedule says right and the opposite
elsewhere.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import yaml

from tests.certificate.test_coverage import RIGHT, schedule
from voirdire.certificate import proportion
from voirdire.cli.main import main
from voirdire.protocols.cross_examination.scoring import gold_correct

ITEMS = 40
SEED = 11


def popqa_claims(path: Path, n: int, seed: int) -> list[dict[str, object]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[: n + 1]]
    coin = np.random.default_rng(seed).random(n) < 0.5
    claims = []
    for i, row in enumerate(rows[:n]):
        other = rows[i + 1]["obj"]
        stated = row["obj"] if coin[i] or gold_correct(f"is {other}.", row["possible_answers"]) else other
        claims.append({"id": f"p{i}", "claim": f"The {row['prop']} of {row['subj']} is {stated}.",
                       "answers": row["possible_answers"]})  # fmt: skip
    return claims


def scripts(folder: Path, claims: list[dict[str, object]], right: list[bool]) -> tuple[Path, Path]:
    examiner, examinee = [], []
    for c, r in zip(claims, right, strict=True):
        tag = str(c["id"])
        gold = gold_correct(str(c["claim"]), c["answers"])  # type: ignore[arg-type]
        says_correct = gold if r else not gold
        examiner.append({"match": rf"Answer about {tag}\b", "reply": "correct" if says_correct else "incorrect"})
        examiner.append({"match": "following claim:" + re.escape(str(c["claim"])), "reply": f"1. What of item {tag}?"})
        examinee.append({"match": rf"item {tag}\b", "reply": f"Answer about {tag}."})
    (folder / "examiner.yaml").write_text(yaml.safe_dump({"rules": examiner}), encoding="utf-8")
    (folder / "examinee.yaml").write_text(yaml.safe_dump({"rules": examinee}), encoding="utf-8")
    return folder / "examiner.yaml", folder / "examinee.yaml"


def test_scripted_popqa_run_reports_the_schedules_accuracy_with_its_interval(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = shared_data / "popqa" / "popqa_longtail_merged.jsonl"
    if not source.is_file():
        pytest.skip("popqa_longtail_merged.jsonl is not in ../shared/data/popqa")
    claims = popqa_claims(source, ITEMS, SEED)
    right = schedule(SEED, ITEMS)
    data = tmp_path / "claims.jsonl"
    data.write_text("".join(json.dumps(c) + "\n" for c in claims), encoding="utf-8")
    examiner, examinee = scripts(tmp_path, claims, right)
    out = tmp_path / "popqa.jsonl"
    models = ["--model", f"examiner=scripted:{examiner}", "--model", f"examinee=scripted:{examinee}"]
    assert main(["examine", "--questions", str(data), "--max-followups", "0", "--no-progress", "--out", str(out),
                 *models]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["calibrate", str(out), "--json", "--resamples", "400"]) == 0
    c = json.loads(capsys.readouterr().out)
    accuracy = c["agreement"]["accuracy"]
    expected = proportion("accuracy", [[r] for r in right])  # what the 400-run simulation checks
    assert c["agreement"]["items"] == ITEMS and c["labels"].startswith("gold answers, alias match")
    assert accuracy["estimate"] == pytest.approx(sum(right) / ITEMS) and accuracy["method"] == "Wilson"
    assert (accuracy["low"], accuracy["high"]) == (pytest.approx(expected.low), pytest.approx(expected.high))
    assert accuracy["low"] <= RIGHT <= accuracy["high"]  # this seed's interval covers the judge's true rate
    assert len(c["disagreements"]) == ITEMS - sum(right)
    capsys.readouterr()
    assert main(["report", str(out), "--json"]) == 0
    certificate = json.loads(capsys.readouterr().out)["certificate"]
    assert certificate["calibration"]["agreement"]["accuracy"] == accuracy
