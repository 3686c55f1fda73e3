"""Labelling in Debian's chromium (headless, Selenium): a reviewer labels ten sessions of a scripted run with the
keyboard only, the sidecar holds ten valid lines and ``calibrate`` reads them, a second annotator labels five and
the queue shows α; blind review keeps the verdict out of the DOM until the label is given; a page on another local
port cannot label (a cross-site fetch and a form submission are refused, the file unchanged)."""

from __future__ import annotations

import html
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.web.runs import PAYLOAD
from tests.web.test_browser import by_css, wait
from tests.web.test_review_app import KEY, post, scripted_review_run, token
from voirdire.certificate import read_run, sample_lines
from voirdire.cli import main
from voirdire.transcript import HumanLabel, read_sidecar, sidecar_path
from voirdire.web.server import Viewer


@pytest.fixture(scope="module")
def transcript(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scripted_review_run(tmp_path_factory.mktemp("review-browser"))


@pytest.fixture
def served(transcript: Path, tmp_path: Path) -> Iterator[tuple[Viewer, Path]]:
    folder = tmp_path / "served"
    folder.mkdir()
    copy = folder / KEY
    copy.write_bytes(transcript.read_bytes())
    v = Viewer([folder], port=0).start()
    yield v, copy
    v.stop()


def keys(browser: Any, text: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(browser).send_keys(text).perform()


def loaded(browser: Any) -> bool:
    return bool(browser.execute_script("return document.readyState") == "complete")


def give_name(browser: Any, name: str) -> None:
    """At the queue's name prompt (focused on load), type the name and Enter: the queue reloads with it."""
    from selenium.webdriver.common.keys import Keys

    wait(browser, lambda b: loaded(b) and b.switch_to.active_element.get_attribute("id") == "queue-name")
    keys(browser, name + Keys.ENTER)
    wait(browser, lambda b: f"annotator={name}" in b.current_url and loaded(b) and by_css(b, "#progress"))


def label_queue(browser: Any, answers: str, total: int) -> None:
    """Press each answer key then ``n``, item after item, checking the progress as it goes."""
    for i, key in enumerate(answers):
        wait(browser, lambda b, i=i: loaded(b) and by_css(b, "#progress") and
             by_css(b, "#progress")[0].text.startswith(f"{i} / {total}") and by_css(b, "#review"))  # fmt: skip
        keys(browser, key)
        wait(browser, lambda b: "saved" in (by_css(b, "#review-status")[0].get_attribute("class") or ""))
        keys(browser, "n")
    wait(browser, lambda b: loaded(b) and by_css(b, "#progress") and
         by_css(b, "#progress")[0].text.startswith(f"{len(answers)} / {total}"))  # fmt: skip


def test_keyboard_only_labelling_then_calibrate_then_a_second_annotator(
    browser: Any, served: tuple[Viewer, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    v, t = served
    queue = f"{v.url}run/{KEY}/review?sample=10&seed=7"
    drawn = [x["item_id"] for x in sample_lines(read_run(t), 10, 7)]
    browser.get(queue)
    give_name(browser, "alice")
    label_queue(browser, "dadaaaaaaa", 10)
    assert by_css(browser, "#queue-done"), "the queue does not say the sample is done"
    lines = sidecar_path(t).read_text(encoding="utf-8").splitlines()
    labels = [HumanLabel.model_validate(json.loads(x)) for x in lines]
    assert len(labels) == 10 and [x.item_id for x in labels] == drawn
    assert [x.reading for x in labels] == ["disagree", "agree", "disagree"] + ["agree"] * 7
    assert all(x.annotator == "alice" and x.sample is not None and x.sample.size == 10 for x in labels)
    capsys.readouterr()
    assert main(["calibrate", str(t), "--json"]) == 0
    c = json.loads(capsys.readouterr().out)
    assert c["agreement"]["items"] == 10 and len(c["disagreements"]) == 2 and c["people"] is None

    browser.execute_script("window.localStorage.clear()")  # another person at this browser
    browser.get(queue)
    give_name(browser, "bob")
    label_queue(browser, "aaaaa", 10)
    people = by_css(browser, "#people")
    assert people, "no people's agreement shown with two annotators"
    assert "Krippendorff's α:" in people[0].text and "Cohen's κ alice–bob" in people[0].text
    assert drawn[0] in people[0].text and drawn[2] in people[0].text  # the items where they disagree
    assert len(read_sidecar(t)) == 15


def test_blind_review_keeps_the_verdict_out_of_the_dom_until_labelled(
    browser: Any, served: tuple[Viewer, Path]
) -> None:
    v, t = served
    browser.get(f"{v.url}run/{KEY}/review?sample=3&seed=7&blind=1&annotator=carol")
    wait(browser, lambda b: loaded(b) and by_css(b, "#review"))
    first = sample_lines(read_run(t), 3, 7)[0]["item_id"]
    decision = next(s.decision for s in read_run(t).sessions if s.item_id == first)
    dom = browser.execute_script("return document.documentElement.outerHTML")
    assert not by_css(browser, ".verdict") and "data-verdict-accepted" not in dom and "Verdict:" not in dom
    assert "The claim is" not in dom  # the conversation that reached the verdict is not there either
    assert not by_css(browser, "#revealed")[0].is_displayed()
    keys(browser, "1")  # the first word of the verdict set as this reviewer's own label
    wait(browser, lambda b: by_css(b, "#revealed")[0].is_displayed())
    assert by_css(browser, "#revealed")[0].text.startswith(f"The verdict was: {decision}")
    (label,) = read_sidecar(t)
    assert label.blind and label.label == "correct" and label.reading == ("agree" if decision == "correct" else
                                                                         "disagree")  # fmt: skip


class Hostile:
    """A page on a second local port that tries to label through the viewer: a fetch and a form, each carrying the
    viewer's real token (as if it had leaked), so only the origin checks stand in the way."""

    def __init__(self, target: str, tok: str) -> None:
        action = html.escape(target + f"run/{KEY}/label")
        fields = {"token": tok, "session_id": "q01", "reading": "agree", "annotator": "mallory"}
        inputs = "".join(f'<input name="{k}" value="{html.escape(x)}">' for k, x in fields.items())
        body = json.dumps(fields)
        pages = {
            "/fetch": f"<script>fetch({json.dumps(target + f'run/{KEY}/label')}, {{method: 'POST', mode: 'no-cors', "
                      f"credentials: 'include', body: new URLSearchParams({body})}}).then(() => {{ document.title = "
                      "'sent'; }, () => { document.title = 'failed'; });</script>",
            "/form": f'<form id="f" method="post" action="{action}">{inputs}</form>'
                     "<script>document.getElementById('f').submit();</script>",
        }  # fmt: skip

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                data = f"<!doctype html><title>hostile</title>{pages.get(self.path, '')}".encode()
                self.send_response(200)
                self.send_header("content-type", "text/html; charset=utf-8")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_page_on_another_local_port_cannot_label(browser: Any, served: tuple[Viewer, Path]) -> None:
    v, t = served
    hostile = Hostile(v.url, token(v))
    try:
        browser.get(hostile.url + "/fetch")
        wait(browser, lambda b: b.title in ("sent", "failed"))
        assert not sidecar_path(t).exists()
        browser.get(hostile.url + "/form")
        wait(browser, lambda b: b.current_url.startswith(v.url) and loaded(b))
        assert "cross-site request refused" in browser.page_source and "403" in browser.title
        assert not sidecar_path(t).exists()
    finally:
        hostile.close()
    assert post(v, {"token": token(v), "session_id": "q01", "reading": "agree", "annotator": "ann"}).status_code == 200
    assert len(read_sidecar(t)) == 1  # the same label from the viewer's own origin is written


def test_payloads_as_names_and_comments_stay_inert_in_the_browser(browser: Any, served: tuple[Viewer, Path]) -> None:
    v, _ = served
    form = {"token": token(v), "session_id": "q01", "reading": "agree", "annotator": PAYLOAD[:80], "comment": PAYLOAD}
    assert post(v, form).status_code == 200
    browser.get(f"{v.url}run/{KEY}/session/q01")
    wait(browser, lambda b: loaded(b) and by_css(b, ".labels-given"))
    assert browser.execute_script("return window.pwned === undefined")
    assert "window.pwned=1" in by_css(browser, ".labels-given")[0].text
