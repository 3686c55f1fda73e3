"""Journey (a): a user examines a dataset with gold answers, draws a sample to label, two people label it in the
viewer (the HTTP POSTs its page sends), then reads ``calibrate``, ``report --json`` and an ``export-html`` page.
Every source of truth keeps its own section: the gold answers (an alias match) beside the people's labels, ties
counted, a small section saying so."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest

from tests.journeys.helpers import cli, cli_json
from voirdire.web.server import Viewer

KEY = "qa.jsonl"
ITEMS = 12
SAMPLE, SEED = 6, 1
EXAMINER = """\
rules:
  - match: verify the correctness of the following claim
    reply: "1. Where is it?"
  - match: Do you have any follow-up questions
    reply: "No."
  - match: correct or incorrect\\\\?
    replies: {replies}
"""
EXAMINEE = """\
rules:
  - match: phrase your answer as a claim
    reply: "The answer is Paris."
  - match: regarding your claim
    reply: "It is in France."
"""


def _examined(folder: Path) -> Path:
    replies = json.dumps(["The claim is correct." if i % 2 else "The claim is incorrect." for i in range(ITEMS)])
    (folder / "examiner.yaml").write_text(EXAMINER.format(replies=replies), encoding="utf-8")
    (folder / "examinee.yaml").write_text(EXAMINEE, encoding="utf-8")
    questions = folder / "questions.jsonl"
    questions.write_text("".join(
        json.dumps({"id": f"q{i:02d}", "question": f"What is the capital of country {i}?",
                    "possible_answers": ["Paris"] if i % 3 else ["Rome"]}) + "\n" for i in range(ITEMS)),
        encoding="utf-8")  # fmt: skip
    runs = folder / "runs"
    runs.mkdir()
    out = runs / KEY
    cli("examine", "--questions", str(questions), "--out", str(out), "--no-progress",
        "--model", f"examiner=scripted:{folder / 'examiner.yaml'}",
        "--model", f"examinee=scripted:{folder / 'examinee.yaml'}")  # fmt: skip
    return out


def _token(v: Viewer, sid: str) -> str:
    found = re.search(r'data-token="([^"]+)"', httpx.get(f"{v.url}run/{KEY}/session/{sid}").text)
    assert found, "the session page carries no token"
    return found.group(1)


def _label(v: Viewer, token: str, sid: str, who: str, label: str) -> None:
    """What the review page's script sends for a label given in the queue (blind: the reviewer's own word)."""
    form = {"token": token, "session_id": sid, "reading": "label", "label": label, "annotator": who,
            "sample": str(SAMPLE), "seed": str(SEED), "blind": "1"}  # fmt: skip
    origin = v.url.rstrip("/")
    headers = {"accept": "application/json", "origin": origin, "sec-fetch-site": "same-origin"}
    answer = httpx.post(f"{v.url}run/{KEY}/label", data=form, headers=headers)
    assert answer.status_code == 200, answer.text


def _section(sources: list[dict], kind: str) -> dict:
    found = [s for s in sources if s["kind"] == kind]
    assert len(found) == 1, [s["name"] for s in sources]
    return found[0]


def test_labels_join_the_gold_section_they_never_replace(tmp_path: Path) -> None:
    transcript = _examined(tmp_path)

    # draw the sample to label: each line holds what a person judges (the claim the examinee made, the reference)
    to_label = tmp_path / "to_label.jsonl"
    cli("calibrate", str(transcript), "--sample", str(SAMPLE), "--seed", str(SEED), "-o", str(to_label))
    lines = [json.loads(x) for x in to_label.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == SAMPLE
    for line in lines:
        assert line["item"]["question"].startswith("What is the capital")
        assert line["item"]["claim examined"] == "The answer is Paris."
        assert line["reference"]["answers"] in (["Paris"], ["Rome"])
    drawn = [x["item_id"] for x in lines]

    v = Viewer([transcript.parent], port=0).start()
    try:
        queue = httpx.get(f"{v.url}run/{KEY}/review", params={"sample": SAMPLE, "seed": SEED, "annotator": "ann"})
        assert queue.status_code == 200
        assert "vs gold" not in queue.text  # the gold is what the reviewer is asked for: never shown beside it
        blind = httpx.get(f"{v.url}run/{KEY}/review",
                          params={"sample": SAMPLE, "seed": SEED, "annotator": "ann", "blind": "1"})  # fmt: skip
        assert "Verdict" not in blind.text and "It is in France." not in blind.text
        assert "Paris" in blind.text or "Rome" in blind.text  # the reference answers a reviewer needs stay
        token = _token(v, drawn[0])
        for n, item in enumerate(drawn):
            _label(v, token, item, "ann", "correct")
            _label(v, token, item, "bob", "correct" if n < SAMPLE - 2 else "incorrect")  # two ties
    finally:
        v.stop()

    calibrated = cli_json("calibrate", str(transcript), "--json")
    sources = calibrated["sources"]
    gold, people = _section(sources, "gold"), _section(sources, "people")
    assert gold["name"] == "gold answers, alias match"
    assert gold["calibration"]["agreement"]["items"] == ITEMS
    assert people["calibration"]["agreement"]["items"] == SAMPLE - 2
    assert sorted(people["calibration"]["ties"]) == sorted(drawn[-2:])
    assert people["calibration"]["people"]["items"] == SAMPLE  # the tied items are in human-human agreement
    assert people["small"] and "30" in people["small"]
    assert "4 of the 6 drawn items" in " ".join(people["calibration"]["assumptions"])

    reported = cli_json("report", str(transcript), "--json")
    cert_sources = reported["certificate"]["sources"]
    assert [s["name"] for s in cert_sources] == [s["name"] for s in sources]
    assert _section(cert_sources, "gold")["calibration"]["agreement"]["items"] == ITEMS
    assert len(_section(cert_sources, "people")["calibration"]["ties"]) == 2

    text = cli("report", str(transcript))
    assert "against gold answers, alias match" in text and "against people's labels" in text
    assert "2 ties" in text or "ties: 2" in text

    page = tmp_path / "page.html"
    cli("export-html", str(transcript), "-o", str(page))
    html = page.read_text(encoding="utf-8")
    assert "gold answers, alias match" in html and "people&#39;s labels" in html


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
