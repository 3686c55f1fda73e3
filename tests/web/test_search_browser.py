"""Search, the item across runs and clickable evidence in Debian's chromium: a search hit opens its session with
the matching turn as the page's target (outlined, in view); an evidence line scrolls to the turn it quotes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.web.test_browser import by_css, click_through, wait
from voirdire.web.server import Viewer

IN_VIEW = (
    "const r = document.querySelector(':target').getBoundingClientRect();"
    "return r.bottom > 0 && r.top < window.innerHeight;"
)


def test_a_search_hit_opens_its_turn(browser: Any, viewer: Viewer) -> None:
    browser.get(viewer.url)
    click_through(browser, "a.search-top")
    box = browser.find_element("name", "q")
    box.send_keys("role:examinee Seine")
    click_through(browser, "form.search-all button")
    runs = [h.text for h in by_css(browser, ".search-run h2 a")]
    assert "examine.jsonl" in runs
    marks = {m.text.lower() for m in by_css(browser, ".search-hit mark")}
    assert marks == {"seine"}
    click_through(browser, ".search-hit a")
    target = wait(browser, lambda b: b.execute_script("return document.querySelector(':target')"))
    assert "bubble" in target.get_attribute("class") and "Seine" in target.text
    assert browser.execute_script(IN_VIEW)
    outline = browser.execute_script("return getComputedStyle(document.querySelector(':target')).outlineStyle")
    assert outline == "solid"
    assert browser.execute_script("return typeof window.pwned") == "undefined"


def test_an_evidence_line_scrolls_to_its_turn(browser: Any, viewer: Viewer, transcripts: dict[str, Path]) -> None:
    browser.get(viewer.url + f"run/{transcripts['entities'].name}")
    click_through(browser, "a.session-link")
    links = by_css(browser, ".verdict a.evidence-link")
    assert links and links[0].text.startswith("test 1:")
    browser.execute_script("window.scrollTo(0, document.body.scrollHeight)")
    links[0].click()
    target = wait(browser, lambda b: b.execute_script("return document.querySelector(':target')"))
    assert target.get_attribute("id") == links[0].get_attribute("href").split("#")[1].split(":~:")[0]
    assert browser.execute_script(IN_VIEW)


def test_from_a_session_to_its_item_in_every_run(browser: Any, viewer: Viewer) -> None:
    browser.get(viewer.url + "run/examine.jsonl/session/paris")
    click_through(browser, "a.across-link")
    rows = by_css(browser, "table.across tbody tr")
    assert rows and "paris" in rows[0].text and "the session compared with" in rows[0].text
    assert by_css(browser, ".side-by-side .side")


def test_payloads_found_by_a_search_stay_text(browser: Any, viewer: Viewer) -> None:
    browser.get(viewer.url + "search?q=pwned")
    hits = by_css(browser, ".search-hit .snippet")
    assert hits and any("<script>" in h.text or "onerror" in h.text for h in hits)  # shown as text
    assert browser.execute_script("return typeof window.pwned") == "undefined"
