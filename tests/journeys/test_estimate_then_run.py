"""Journey (d): a user asks ``--estimate``, runs the command, and asks ``--estimate`` again. Each estimate prints one
expected figure (requests, tokens, cost) with its bound; the second one's comes from the first run's transcript and
says so, and the run stayed within the bound."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.journeys.helpers import cli, cli_json
from voirdire.transcript import CallTally, ModelCall, iter_records

EXAMINER = {
    "rules": [
        {"match": r"correct or incorrect\?", "reply": "The claim is correct."},
        {"match": r"follow-up questions\? Please answer with Yes or No", "reply": "No."},
    ],
    "default": "1. Who wrote it?\n2. When?",
}
EXAMINEE = {"default": "Shakespeare wrote it, around 1600, in London."}
CLAIMS = [{"id": f"c{i}", "question": "Who wrote Hamlet?", "answers": ["Shakespeare"]} for i in range(4)]


def _requests(out: Path) -> int:
    tally = CallTally()
    for record in iter_records(out):
        if isinstance(record, ModelCall):
            tally.count_call(record)
    return tally.requests


def test_the_estimate_the_run_and_the_estimate_again_agree(tmp_path: Path) -> None:
    data = tmp_path / "claims.jsonl"
    data.write_text("".join(json.dumps(c) + "\n" for c in CLAIMS), encoding="utf-8")
    (tmp_path / "examiner.yaml").write_text(yaml.safe_dump(EXAMINER), encoding="utf-8")
    (tmp_path / "examinee.yaml").write_text(yaml.safe_dump(EXAMINEE), encoding="utf-8")
    out = tmp_path / "t.jsonl"
    args = ["examine", "--questions", str(data), "--out", str(out), "--max-followups", "1",
            "--model", f"examiner=scripted:{tmp_path / 'examiner.yaml'}",
            "--model", f"examinee=scripted:{tmp_path / 'examinee.yaml'}"]  # fmt: skip

    first = cli_json(*args, "--estimate", "--json")
    assert first["expected"]["source"] == "budget" and first["expected"]["requests"] == first["requests"]
    text = cli(*args, "--estimate")
    assert text.splitlines()[0].count("expected") == 1 and "requests" in text.splitlines()[0]
    assert sum("expected" in line for line in text.splitlines()) == 1  # one expectation, never two figures

    cli(*args, "--no-progress")
    actual = _requests(out)

    again = cli_json(*args, "--estimate", "--json")
    expected = again["expected"]
    assert expected["source"] == "transcript" and expected["transcript"] == str(out)
    assert expected["requests"] == actual  # the same command on the same items: what the run took
    assert actual <= again["requests"]  # within the stated bound (an estimate here: questions per turn assumed)
    assert expected["tokens"] > 0 and expected["requests"] <= again["requests"]
    text = cli(*args, "--estimate")
    head = text.splitlines()[0]
    assert f"expected {actual:,} requests" in head and "t.jsonl" in head
    assert sum("expected" in line for line in text.splitlines()) == 1
