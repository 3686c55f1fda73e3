"""The viewer in Debian's chromium (headless, driven by Selenium): from the runs list into a session of every landed
protocol, the chat, its dividers, the verdict and its evidence; filters and search; live updates while a transcript
grows; and HTML/script payloads in model text that render as text and run nothing (``window.pwned`` stays unset)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.web.runs import PAYLOADS
from voirdire.transcript import Message, ModelCall, RunHeader, SessionStart, TokenUsage, TranscriptWriter, Verdict
from voirdire.web.server import Viewer

# what each protocol's first session must show: dividers, structured steps, a phrase of the evidence
EXPECTED = {
    "cross_examination": {"dividers": {"claim", "setup", "followup_ask", "decision"}, "notes": set(),
                          "evidence": "The claim is correct.", "failure": True, "bubbles": 7},
    "majority": {"dividers": {"setup", "decision"}, "notes": set(), "evidence": "I cannot tell.", "failure": True,
                 "bubbles": 12, "lanes": 3},
    "no_data": {"dividers": {"label", "propose", "challenge", "decision"}, "notes": {"Algorithm 1 decision"},
                "evidence": "round 1: challenge", "failure": False, "bubbles": 9},
    "qa_lexical": {"dividers": set(), "notes": {"lexical match"}, "evidence": "", "failure": False, "bubbles": 0},
    "qa_entailment": {"dividers": {"qa2d", "entailment", "hierarchy"}, "evidence": "cell:", "failure": False,
                      "notes": {"QA2D statement of the system answer", "hierarchy cell A_sup ∩ A_inf"}, "bubbles": 4},
    "dcr": {"dividers": {"dce", "amc", "rai"}, "notes": {"DCE · reasons, round 0", "AMC · candidate sentences, round 0",
            "RAI · rewrite for round 1"}, "evidence": "+1 ", "failure": False, "bubbles": 5},
    "entities": {"dividers": {"extract", "classify", "synonyms", "test"}, "evidence": "test 1:", "failure": False,
                 "notes": {"extraction of the original sentence", "linearity test 1"}, "bubbles": 5},
}  # fmt: skip


def wait(browser: Any, condition: Any, timeout: float = 60) -> Any:  # a bound, not a measure: a busy machine waits
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, timeout, poll_frequency=0.1).until(condition)


def by_css(browser: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return list(browser.find_elements(By.CSS_SELECTOR, selector))


def click_through(browser: Any, css: str, index: int = 0) -> None:
    old = browser.current_url
    by_css(browser, css)[index].click()
    wait(browser, lambda b: b.current_url != old and b.execute_script("return document.readyState") == "complete")


@pytest.mark.parametrize("protocol", list(EXPECTED))
def test_from_the_runs_list_into_a_session(
    browser: Any, viewer: Viewer, transcripts: dict[str, Path], protocol: str
) -> None:
    browser.get(viewer.url)
    names = [a.text for a in by_css(browser, "a.run-link")]
    # Once in a full run the oldest runs were missing here: say what the page showed instead (a problem row?).
    problems = [p.text for p in by_css(browser, ".problem")]
    assert set(names) >= {p.name for p in transcripts.values()}, (names, problems, browser.page_source[:4000])
    click_through(browser, "a.run-link", names.index(transcripts[protocol].name))
    assert browser.find_element("css selector", "h1").text.startswith(transcripts[protocol].name)
    assert by_css(browser, "table.sessions tbody tr")
    click_through(browser, "a.session-link")
    want = EXPECTED[protocol]
    bubbles = by_css(browser, ".chat .bubble")
    assert len(bubbles) >= want["bubbles"] and all(b.is_displayed() for b in bubbles)
    shown_dividers = {d.find_element("css selector", "b").text for d in by_css(browser, ".chat .divider")}
    assert want["dividers"] <= shown_dividers, shown_dividers
    assert want["notes"] <= {n.text for n in by_css(browser, ".note .note-name")}, [
        n.text for n in by_css(browser, ".note .note-name")
    ]
    assert bool(by_css(browser, ".failure")) == want["failure"]
    verdict = browser.find_element("css selector", "section.verdict")
    assert verdict.is_displayed() and verdict.find_element("css selector", "h2").text.startswith("Verdict:")
    evidence = [li.text for li in by_css(browser, ".verdict ol.evidence li")]
    assert evidence and any(want["evidence"] in e for e in evidence), evidence
    assert len(by_css(browser, ".lanes .lane")) == want.get("lanes", 0)
    if bubbles:  # the rendered prompt behind a reply opens on demand
        replies = by_css(browser, ".bubble.kind-reply details.rendered")
        assert replies
        body = replies[0].find_element("css selector", "pre")
        assert not body.is_displayed()
        replies[0].find_element("css selector", "summary").click()
        assert body.is_displayed() and body.text.strip()
        assert bubbles[0].find_element("css selector", ".role").get_attribute("title")  # the model on hover
    assert browser.execute_script("return typeof window.pwned") == "undefined"


def test_filters_and_search(browser: Any, viewer: Viewer) -> None:
    from selenium.webdriver.support.ui import Select

    browser.get(viewer.url + "run/examine.jsonl")
    assert len(by_css(browser, "a.session-link")) == 2
    Select(browser.find_element("name", "verdict")).select_by_value("incorrect")
    click_through(browser, "form.filters button")
    assert [a.text for a in by_css(browser, "a.session-link")] == ["rome"]
    browser.get(viewer.url + "run/examine.jsonl")
    browser.find_element("name", "q").send_keys("Italy")
    click_through(browser, "form.filters button")
    assert [a.text for a in by_css(browser, "a.session-link")] == ["rome"]
    assert "1 of 2 sessions" in browser.find_element("css selector", "p.count").text


def test_payloads_in_model_text_render_as_text_and_run_nothing(
    browser: Any, viewer: Viewer, transcripts: dict[str, Path], tmp_path: Path
) -> None:
    pages = []
    for key in ("hostile.jsonl", "hostile-fields.jsonl"):
        browser.get(viewer.url + "run/" + key)
        pages += [a.get_attribute("href") for a in by_css(browser, "a.session-link")]
    exported = tmp_path / "hostile.html"
    from voirdire.web.export import export_file

    export_file(transcripts["hostile_fields"], exported)
    pages.append(exported.as_uri())
    for url in pages:
        browser.get(url)
        for details in by_css(browser, "details"):  # open every collapsed part, raw replies and prompts too
            browser.execute_script("arguments[0].open = true", details)
        text = browser.find_element("tag name", "body").text
        for payload in PAYLOADS:
            assert payload in text, (url, payload)
        assert browser.execute_script("return typeof window.pwned") == "undefined", url
        images = [str(i.get_attribute("src")) for i in by_css(browser, "img")]  # only the viewer's own charts
        assert all(src.startswith(("data:image/svg+xml", viewer.url)) for src in images), images
        assert by_css(browser, "a[href^='javascript']") == []
        scripts = [s.get_attribute("src") for s in by_css(browser, "script")]
        own = [viewer.url + "static/viewer.js", viewer.url + "static/review.js"]  # the review panel's too
        assert scripts in ([], own[:1], own), scripts
    # a click on the text that looks like a link does nothing either
    for element in by_css(browser, ".text"):
        if "click me" in element.text:
            element.click()
    assert browser.execute_script("return typeof window.pwned") == "undefined"


def test_a_run_in_progress_updates_the_open_page(browser: Any, tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    writer = TranscriptWriter(path)
    writer.write(RunHeader(run_id="r", protocol="toy", roles={}))
    writer.write(SessionStart(run_id="r", session_id="first", seq=1, item_id="first", item={"text": "first item"}))
    live = Viewer([tmp_path], port=0).start()
    try:
        browser.get(live.url + "run/live.jsonl")
        browser.execute_script("window.stayed = true")  # gone if the page were reloaded
        assert [a.text for a in by_css(browser, "a.session-link")] == ["first"]
        writer.write(SessionStart(run_id="r", session_id="second", seq=1, item_id="second", item={"text": "next"}))
        wait(browser, lambda b: len(by_css(b, "a.session-link")) == 2)
        assert browser.execute_script("return window.stayed") is True

        browser.get(live.url + "run/live.jsonl/session/second")
        browser.execute_script("window.stayed = true")
        assert by_css(browser, ".bubble") == [] and by_css(browser, "section.verdict") == []
        base = {"run_id": "r", "session_id": "second"}
        writer.write(Message(**base, seq=2, sender="moderator", receiver="judge", content="Is it next?"))
        writer.write(
            ModelCall(**base, seq=3, role="judge", model="m", request_digest="d", response="It is next.",
                      usage=TokenUsage(prompt_tokens=5, completion_tokens=3), latency_s=0.25)
        )  # fmt: skip
        writer.write(Message(**base, seq=4, sender="judge", receiver="moderator", content="It is next."))
        wait(browser, lambda b: any("It is next." in e.text for e in by_css(b, ".bubble")))
        assert "5+3 tokens" in by_css(browser, ".bubble .meta")[0].text
        writer.write(Verdict(**base, seq=5, decision="next", accepted=True, evidence=["it said so"]))
        wait(browser, lambda b: bool(by_css(b, "section.verdict")))
        assert "it said so" in browser.find_element("css selector", "section.verdict").text
        assert browser.execute_script("return window.stayed") is True
    finally:
        writer.close()
        live.stop()


def first_session(browser: Any, viewer: Viewer, key: str) -> None:
    browser.get(viewer.url + "run/" + key)
    click_through(browser, "a.session-link")


def test_a_dcr_session_shows_the_sentence_table_and_the_rewrite(browser: Any, viewer: Viewer) -> None:
    first_session(browser, viewer, "dcr.jsonl")
    cards = [c for c in by_css(browser, ".note .card") if "candidate sentences, round 0" in c.text]
    table = cards[0].find_element("css selector", "table.steps")
    assert table.is_displayed()
    heads = [th.text for th in table.find_elements("css selector", "th")]
    assert heads == ["#", "candidate sentence", "status", "AMC mark", "reasons"]
    rows = [
        [td.text for td in tr.find_elements("css selector", "td")]
        for tr in table.find_elements("css selector", "tbody tr")
    ]
    assert rows[1][1:4] == ["Bolt is the iaaf/btc general secretary .", "inconsistent", "−1"]
    assert rows[2][1:4] == ["Bolt trains in Kingston .", "not evaluated", "not marked"]
    deleted = [d.text for d in by_css(browser, ".diff del")]
    inserted = [i.text for i in by_css(browser, ".diff ins")]
    assert "Bolt" in deleted and "Garth Gayle" in inserted
    folded = by_css(browser, ".bubble details.folded")[0]  # the evaluator's JSON, on demand
    assert not folded.find_element("css selector", ".text").is_displayed()


def test_an_entities_session_shows_the_tests_with_their_vectors(browser: Any, viewer: Viewer) -> None:
    first_session(browser, viewer, "entities.jsonl")
    tests = [c for c in by_css(browser, ".note .card") if c.text.startswith("linearity test")]
    assert len(tests) == 5
    first = tests[0].find_element("css selector", ".card-head").text
    assert "x 000" in first and "y 010" in first and "x ⊕ y 010" in first
    assert "f(x ⊕ y) = f(x) ⊖ f(y) passed" in first
    rows = tests[0].find_elements("css selector", "table.steps tbody tr")
    assert [r.find_elements("css selector", "td")[0].text for r in rows] == ["x", "y", "x+y"]
    verdict = browser.find_element("css selector", "section.verdict")
    assert "Theorems 3.1/3.2" in verdict.text and "0.746" in verdict.text
