"""Labelling in the viewer over HTTP (a real server on 127.0.0.1): the token and same-origin checks, validation
with a 400 and nothing written, the queue's sample (calibrate's own), superseding labels, concurrent writers,
escaped text, a folder that cannot be written; and ``voirdire labels`` / ``calibrate`` reading the sidecar."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.web.runs import EXAMINEE, PAYLOAD, run
from voirdire.certificate import read_run, sample_lines
from voirdire.cli import main
from voirdire.transcript import current_labels, read_sidecar, sidecar_path
from voirdire.web.server import Viewer

KEY = "review.jsonl"
ITEMS = 12


def scripted_review_run(folder: Path) -> Path:
    """Twelve LMvLM sessions with scripted models: every third verdict ``incorrect``, the rest ``correct``."""
    replies = json.dumps(["The claim is incorrect." if i % 3 == 0 else "The claim is correct." for i in range(40)])
    examiner = folder / "review-examiner.yaml"
    examiner.write_text(
        "rules:\n"
        "  - match: verify the correctness of the following claim\n    reply: \"1. Where is it?\"\n"
        "  - match: Do you have any follow-up questions\n    reply: \"No.\"\n"
        f"  - match: correct or incorrect\\\\?\n    replies: {replies}\n",
        encoding="utf-8",
    )
    examinee = folder / "review-examinee.yaml"
    examinee.write_text(EXAMINEE, encoding="utf-8")
    questions = folder / "review-questions.jsonl"
    questions.write_text("".join(
        json.dumps({"id": f"q{i:02d}", "question": f"What is the capital of country {i}?",
                    "possible_answers": ["Paris"]}) + "\n" for i in range(ITEMS)), encoding="utf-8")  # fmt: skip
    runs = folder / "runs"
    runs.mkdir()
    out = runs / KEY
    run("examine", "--questions", str(questions), "--out", str(out),
        "--model", f"examiner=scripted:{examiner}", "--model", f"examinee=scripted:{examinee}")  # fmt: skip
    return out


@pytest.fixture(scope="module")
def transcript(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scripted_review_run(tmp_path_factory.mktemp("review"))


@pytest.fixture
def served(transcript: Path, tmp_path: Path) -> Iterator[tuple[Viewer, Path]]:
    """A fresh copy of the run (no sidecar yet) served by its own viewer."""
    folder = tmp_path / "served"
    folder.mkdir()
    copy = folder / KEY
    copy.write_bytes(transcript.read_bytes())
    v = Viewer([folder], port=0).start()
    yield v, copy
    v.stop()


def token(v: Viewer, sid: str = "q01") -> str:
    page = httpx.get(f"{v.url}run/{KEY}/session/{sid}").text
    found = re.search(r'data-token="([^"]+)"', page)
    assert found, "the session page carries no token"
    return found.group(1)


def post(v: Viewer, form: dict[str, str], *, headers: dict[str, str] | None = None) -> httpx.Response:
    origin = v.url.rstrip("/")
    sent = {"accept": "application/json", "origin": origin, "sec-fetch-site": "same-origin", **(headers or {})}
    return httpx.post(f"{v.url}run/{KEY}/label", data=form, headers={k: x for k, x in sent.items() if x})


def agree(v: Viewer, sid: str = "q01", who: str = "ann", **extra: str) -> dict[str, str]:
    return {"token": token(v), "session_id": sid, "reading": "agree", "annotator": who, **extra}


def test_a_label_is_one_line_beside_the_transcript(served: tuple[Viewer, Path]) -> None:
    v, t = served
    before = t.read_bytes()
    answer = post(v, agree(v, comment="looks right"))
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"saved": True, "verdict": "correct", "accepted": True, "reading": "agree",
                             "label": "correct", "annotator": "ann", "file": f"{KEY}.labels.jsonl"}  # fmt: skip
    (line,) = read_sidecar(t)
    assert (line.item_id, line.session_id, line.verdict, line.label, line.comment) == (
        "q01", "q01", "correct", "correct", "looks right")
    assert t.read_bytes() == before
    again = post(v, {**agree(v), "reading": "disagree", "label": "incorrect"})
    assert again.status_code == 200 and again.json()["reading"] == "disagree"
    assert len(read_sidecar(t)) == 2
    assert current_labels(read_sidecar(t))[("q01", "ann")].label == "incorrect"


@pytest.mark.parametrize(
    ("headers", "form", "why"),
    [
        ({}, {"token": ""}, "missing or wrong token"),
        ({}, {"token": "guessed"}, "missing or wrong token"),
        ({"origin": "http://127.0.0.1:1"}, {}, "cross-origin request refused"),
        ({"origin": "null"}, {}, "cross-origin request refused"),
        ({"sec-fetch-site": "same-site"}, {}, "cross-site request refused"),
        ({"sec-fetch-site": "cross-site"}, {}, "cross-site request refused"),
    ],
)
def test_a_write_needs_the_token_and_the_viewers_own_origin(
    served: tuple[Viewer, Path], headers: dict[str, str], form: dict[str, str], why: str
) -> None:
    v, t = served
    answer = post(v, {**agree(v), **form}, headers=headers)
    assert answer.status_code == 403 and why in answer.json()["error"]
    assert not sidecar_path(t).exists()


@pytest.mark.parametrize(
    ("form", "why"),
    [
        ({"session_id": "nope"}, "unknown session 'nope'"),
        ({"reading": "maybe"}, "reading 'maybe' is not one of"),
        ({"reading": "disagree", "label": "sort of"}, "label 'sort of' is not one of this run's verdicts"),
        ({"reading": "disagree", "label": "correct"}, "disagree needs a label that differs"),
        ({"annotator": "  "}, "no reviewer name"),
        ({"annotator": "x" * 81}, "reviewer name longer than 80"),
        ({"comment": "y" * 2001}, "comment longer than 2000"),
        ({"sample": "5", "seed": "x"}, "seed 'x'"),
        ({"sample": "0", "seed": "7"}, "sample '0'"),
    ],
)
def test_a_bad_label_is_a_400_and_nothing_is_written(
    served: tuple[Viewer, Path], form: dict[str, str], why: str
) -> None:
    v, t = served
    answer = post(v, {**agree(v), **form})
    assert answer.status_code == 400, answer.text
    assert why in answer.json()["error"]
    assert not sidecar_path(t).exists()


def test_an_item_outside_the_queues_sample_is_refused(served: tuple[Viewer, Path], transcript: Path) -> None:
    v, t = served
    drawn = {x["item_id"] for x in sample_lines(read_run(t), 3, 7)}
    outside = next(f"q{i:02d}" for i in range(ITEMS) if f"q{i:02d}" not in drawn)
    answer = post(v, agree(v, outside, sample="3", seed="7"))
    assert answer.status_code == 400 and "is not in the sample --sample 3 --seed 7" in answer.json()["error"]
    assert not sidecar_path(t).exists()


def test_only_post_writes_and_a_form_without_script_is_redirected_back(served: tuple[Viewer, Path]) -> None:
    v, t = served
    assert httpx.get(f"{v.url}run/{KEY}/label", params=agree(v)).status_code == 405
    assert not sidecar_path(t).exists()
    answer = post(v, agree(v, back=f"/run/{KEY}/session/q01"), headers={"accept": "text/html"})
    assert answer.status_code == 303 and answer.headers["location"] == f"/run/{KEY}/session/q01"
    assert len(read_sidecar(t)) == 1
    refused = post(v, {**agree(v), "token": "x"}, headers={"accept": "text/html"})
    assert refused.status_code == 403 and "missing or wrong token" in refused.text
    assert len(read_sidecar(t)) == 1


def test_two_tabs_labelling_at_once_keep_every_label_whole(served: tuple[Viewer, Path]) -> None:
    v, t = served
    tok = token(v)
    failures: list[str] = []

    def tab(who: str) -> None:
        for i in range(ITEMS):
            form = {"token": tok, "session_id": f"q{i:02d}", "reading": "unsure", "annotator": who,
                    "comment": who * 250}  # fmt: skip
            answer = post(v, form)
            if answer.status_code != 200:
                failures.append(answer.text)

    tabs = [threading.Thread(target=tab, args=(who,)) for who in ("tab-one", "tab-two")]
    for x in tabs:
        x.start()
    for x in tabs:
        x.join()
    assert not failures
    lines = sidecar_path(t).read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 * ITEMS and all(json.loads(x)["comment"] in ("tab-one" * 250, "tab-two" * 250)
                                           for x in lines)  # fmt: skip


def test_names_and_comments_are_escaped_where_shown(served: tuple[Viewer, Path]) -> None:
    v, t = served
    assert post(v, agree(v, who="<b>eve</b>\x1b[2J", comment=PAYLOAD)).status_code == 200
    page = httpx.get(f"{v.url}run/{KEY}/session/q01").text
    panel = page[page.index('<section class="review"'):]
    assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in panel and "<script>window.pwned" not in panel
    assert "&lt;b&gt;eve&lt;/b&gt;␛[2J" in panel and "<b>eve</b>" not in panel
    assert read_sidecar(t)[0].annotator == "<b>eve</b>␛[2J"  # control characters made visible when kept


def test_the_queue_walks_calibrates_sample_and_skips_what_this_annotator_labelled(
    served: tuple[Viewer, Path]
) -> None:
    v, t = served
    drawn = [x["item_id"] for x in sample_lines(read_run(t), 5, 7)]
    url = f"{v.url}run/{KEY}/review?sample=5&seed=7&annotator=ann"
    assert f"Item 1 of 5: {drawn[0]}" in httpx.get(url).text
    assert post(v, agree(v, drawn[0], sample="5", seed="7")).status_code == 200
    page = httpx.get(url).text
    assert "<b>1 / 5</b> labelled by ann" in page and f"Item 2 of 5: {drawn[1]}" in page
    other = httpx.get(url.replace("annotator=ann", "annotator=bob")).text
    assert "<b>0 / 5</b>" in other and f"Item 1 of 5: {drawn[0]}" in other
    assert read_sidecar(t)[0].sample is not None and read_sidecar(t)[0].sample.seed == 7  # type: ignore[union-attr]


def test_blind_queue_html_holds_no_verdict_until_labelled(served: tuple[Viewer, Path]) -> None:
    v, _ = served
    page = httpx.get(f"{v.url}run/{KEY}/review?sample=5&seed=7&annotator=ann&blind=1").text
    main = page[page.index("<main"):]
    assert 'class="verdict' not in main and "Verdict:" not in main and "data-verdict-accepted" not in main
    assert "The claim is" not in main  # the examiner's deciding reply is part of the hidden conversation
    assert 'data-reading="label" data-label="correct"' in main


def test_a_folder_that_cannot_be_written_says_why(served: tuple[Viewer, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    v, t = served
    tok = token(v)
    monkeypatch.setattr("voirdire.web.review.why_not_writable", lambda path: f"the folder {path.parent} is read-only")
    page = httpx.get(f"{v.url}run/{KEY}/session/q01").text
    assert "Labelling is unavailable: the folder" in page and 'data-token=""' in page
    assert "claim" in page  # reading still works
    answer = post(v, {"token": tok, "session_id": "q01", "reading": "agree", "annotator": "ann"})
    assert answer.status_code == 409 and "read-only" in answer.json()["error"]
    assert not sidecar_path(t).exists()


def test_labels_command_and_calibrate_read_the_sidecar(
    served: tuple[Viewer, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    v, t = served
    drawn = [x["item_id"] for x in sample_lines(read_run(t), 4, 7)]
    for i, item in enumerate(drawn):
        form = agree(v, item, who="ann", sample="4", seed="7")
        if i == 0:  # the first against the verdict
            form.update(reading="disagree", label="incorrect" if _verdict(t, item) == "correct" else "correct")
        assert post(v, form).status_code == 200
    capsys.readouterr()
    assert main(["labels", str(t), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["item_id"] for r in rows] == drawn and rows[0]["reading"] == "disagree"
    assert main(["labels", str(t), "--csv"]) == 0
    csv_lines = capsys.readouterr().out.splitlines()
    assert csv_lines[0].startswith("item_id,session_id,verdict,reading,label,annotator") and len(csv_lines) == 5
    assert main(["calibrate", str(t), "--json"]) == 0
    c = json.loads(capsys.readouterr().out)
    assert c["labels"].endswith("(4 labels of 4 items)")
    assert "drawn by --sample 4 --seed 7" in " ".join(c["assumptions"])
    assert c["agreement"]["items"] == 4 and sum(c["agreement"]["confusion"].values()) == 4
    assert len(c["disagreements"]) == 1 and c["disagreements"][0]["item_id"] == drawn[0]


def _verdict(t: Path, item: str) -> str:
    return next(s.decision for s in read_run(t).sessions if s.item_id == item) or ""


def test_the_lists_show_labels_and_the_sessions_list_filters_by_them(served: tuple[Viewer, Path]) -> None:
    v, _ = served
    assert "labelled ·" not in httpx.get(v.url).text
    assert post(v, agree(v, "q01", who="ann")).status_code == 200
    assert post(v, agree(v, "q02", who="ann")).status_code == 200
    assert post(v, {**agree(v, "q02", who="bob"), "reading": "disagree", "label": "incorrect"}).status_code == 200
    assert post(v, {**agree(v, "q04", who="bob"), "reading": "disagree", "label": "incorrect"}).status_code == 200
    runs = httpx.get(v.url).text
    assert "3 labelled · 50% agree · people differ on 1" in runs

    def listed(choice: str) -> list[str]:
        page = httpx.get(f"{v.url}run/{KEY}", params={"labels": choice}).text
        return re.findall(r'class="session-link" href="[^"]+">([^<]+)</a>', page)

    assert listed("labelled") == ["q01", "q02", "q04"]
    assert listed("disagrees") == ["q02", "q04"]
    assert listed("people disagree") == ["q02"]
    assert len(listed("not labelled")) == ITEMS - 3 and "q01" not in listed("not labelled")
    assert len(listed("")) == ITEMS
    page = httpx.get(f"{v.url}run/{KEY}").text
    assert "2 · people differ" in page and "1 · agrees" in page and "1 · disagrees" in page
    assert f'href="/run/{KEY}/review">review a sample</a>' in page


def test_labels_text_all_lines_and_calibrate_on_labels_not_from_one_sample(
    served: tuple[Viewer, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    v, t = served
    assert main(["labels", str(t)]) == 0
    assert "no labels yet" in capsys.readouterr().out
    assert post(v, agree(v, "q01", who="ann")).status_code == 200
    assert post(v, {**agree(v, "q01", who="ann"), "reading": "disagree", "label": "incorrect"}).status_code == 200
    assert post(v, agree(v, "q02", who="bob", comment="fine")).status_code == 200
    assert main(["labels", str(t)]) == 0
    text = capsys.readouterr().out
    assert "3 lines, 2 shown" in text and "2 items labelled by 2 annotators; 1 of 2 labels agree" in text
    assert main(["labels", str(t), "--all", "--json"]) == 0
    assert [r["reading"] for r in json.loads(capsys.readouterr().out)] == ["agree", "disagree", "agree"]
    assert main(["calibrate", str(t)]) == 2  # labels from session pages: not a sample voirdire drew
    err = capsys.readouterr().err
    assert "2 of the run's 12 items are labelled, not all from one review queue's sample" in err
    assert main(["calibrate", str(t), "--labels-are-random", "--json"]) == 0
    c = json.loads(capsys.readouterr().out)
    assert c["agreement"]["items"] == 2 and "declared by --labels-are-random" in " ".join(c["assumptions"])
    assert main(["labels", str(t.with_name("missing.jsonl"))]) != 0
    assert "missing.jsonl: no such transcript" in capsys.readouterr().err


@pytest.mark.parametrize(("size", "seed"), [(1, 0), (5, 7), (12, 3), (200, 7)])
def test_the_viewer_draws_calibrates_sample_from_its_index(transcript: Path, size: int, seed: int) -> None:
    from voirdire.web.index import TranscriptIndex
    from voirdire.web.review_run import indexed_run

    index = TranscriptIndex(transcript, persist=False)
    index.refresh()
    viewer = [(x["item_id"], x["session_id"]) for x in indexed_run(index).sample(size, seed)]
    calibrate = [(x["item_id"], x["session_id"]) for x in sample_lines(read_run(transcript), size, seed)]
    assert viewer == calibrate and len(viewer) == min(size, ITEMS)
    assert indexed_run(index).words == read_run(transcript).decisions() == {"correct": True, "incorrect": False}
