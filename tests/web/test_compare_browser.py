"""The viewer's charts and run comparison in Debian's headless chromium: a run's charts page shows its server-drawn
SVG charts; the comparison page of two LMvLM runs over the same items shows the agreement and Cohen's κ, the
heatmaps, the "disagree" filter, and an item's two sessions side by side."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web import runs
from voirdire.web.server import Viewer

SKEPTIC = """\
rules:
  - match: verify the correctness of the following claim
    reply: "1. Where is it?"
  - match: Do you have any follow-up questions
    reply: "No."
  - match: correct or incorrect\\\\?
    reply: "The claim is incorrect."
"""


def two_runs(folder: Path, scripts: Path) -> tuple[Path, Path]:
    """LMvLM over Paris and Rome twice: the scripted examiner of the viewer tests, and one that rejects every claim."""
    first = runs.cross_examination(folder, scripts)
    (scripts / "skeptic.yaml").write_text(SKEPTIC, encoding="utf-8")
    second = folder / "skeptic.jsonl"
    runs.run(
        "examine", "--questions", str(scripts / "questions.jsonl"), "--out", str(second),
        "--model", f"examiner=scripted:{scripts / 'skeptic.yaml'}",
        "--model", f"examinee=scripted:{scripts / 'examinee.yaml'}",
    )  # fmt: skip
    return first, second


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Viewer]:
    folder, scripts = tmp_path_factory.mktemp("compared"), tmp_path_factory.mktemp("compared-scripts")
    two_runs(folder, scripts)
    v = Viewer([folder], port=0).start()
    yield v
    v.stop()


def wait(browser: Any, condition: Any, timeout: float = 60) -> Any:  # a bound, not a measure: a busy machine waits
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, timeout, poll_frequency=0.1).until(condition)


def css(browser: Any, selector: str) -> list[Any]:
    return list(browser.find_elements("css selector", selector))


def loaded(browser: Any, img: Any) -> bool:
    """The image was fetched and decoded (a broken or refused image has no natural width)."""
    return bool(browser.execute_script("return arguments[0].complete && arguments[0].naturalWidth > 0", img))


def click(browser: Any, selector: str) -> None:
    old = browser.current_url
    css(browser, selector)[0].click()
    wait(browser, lambda b: b.current_url != old and b.execute_script("return document.readyState") == "complete")


def test_a_run_page_links_to_its_charts_drawn_on_the_server(browser: Any, compared: Viewer) -> None:
    browser.get(compared.url + "run/examine.jsonl")
    click(browser, "a[href$='/charts']")
    figures = css(browser, "figure.chart")
    titles = [f.find_element("css selector", "img").get_attribute("alt") for f in figures]
    assert any(t.startswith("Verdicts of 2 sessions: 2/2 agree with gold") for t in titles), titles
    assert any(t.startswith("LMvLM: precision, recall and F1") for t in titles), titles
    for f in figures:
        img = f.find_element("css selector", "img")
        wait(browser, lambda b, img=img: loaded(b, img))
        assert img.get_attribute("src").endswith(".svg")


def test_the_comparison_page_shows_agreement_and_kappa(browser: Any, compared: Viewer) -> None:
    browser.get(compared.url)
    click(browser, "a.compare-link")
    for box in css(browser, "input[name=run]"):
        box.click()
    click(browser, "#compare-submit")
    pair = css(browser, "table.compare-pairs tbody tr")[0]
    assert pair.find_element("css selector", "td.agreement").text == "50.0%"
    assert pair.find_element("css selector", "td.kappa").text == "0.000"
    gold = [td.text for td in css(browser, "table.compare-runs td.gold-rate")]
    assert sorted(gold) == ["1/2 (50.0%)", "2/2 (100.0%)"]  # the skeptic rejects the correct Paris claim
    heatmaps = css(browser, "figure.chart img")
    assert {h.get_attribute("alt").split(" (")[0] for h in heatmaps} >= {
        "Agreement between runs",
        "Cohen's κ between runs",
    }
    for img in heatmaps:
        wait(browser, lambda b, img=img: loaded(b, img))
    items = [tr.find_element("css selector", "td.item-id").text for tr in css(browser, "table.compare-items tbody tr")]
    assert items == ["paris", "rome"]
    click(browser, "#only-disagree")
    rows = css(browser, "table.compare-items tbody tr")
    assert [r.find_element("css selector", "td.item-id").text for r in rows] == ["paris"]
    shown = sorted(
        td.find_element("css selector", "a").text for td in rows[0].find_elements("css selector", "td.cmp-verdict")
    )
    assert shown == ["correct", "incorrect"]
    click(browser, "a.side-by-side")
    sides = css(browser, ".side-by-side section.side")
    assert len(sides) == 2
    verdicts = sorted(s.find_element("css selector", "section.verdict h2").text.split()[1].lower() for s in sides)
    assert verdicts == ["correct", "incorrect"], verdicts
    assert browser.execute_script("return window.pwned") is None
