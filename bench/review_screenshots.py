"""The screenshots of docs/viewer.md's "Reviewing and labelling": a scripted LMvLM run of twelve items (the one the
review tests use) in the viewer, in Debian's headless chromium: the queue with the review panel, the same queue in
blind mode before and after the label, a session page with labels given, the queue once two people labelled (α and
κ), and the sessions list filtered to the items people disagree on. The labels are given with the keyboard, as a
reviewer would.

    python bench/review_screenshots.py --out docs/screenshots/review
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from tests.web.test_review_app import KEY, scripted_review_run  # noqa: E402
from voirdire.web.server import Viewer  # noqa: E402


def browser(width: int, height: int) -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--hide-scrollbars"):
        options.add_argument(arg)
    options.add_argument(f"--window-size={width},{height}")
    return webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)


def press(driver: Any, text: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(driver).send_keys(text).perform()


def settle(driver: Any, css: str) -> None:
    """Wait (bounded) until ``css`` is on a loaded page."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 60, poll_frequency=0.1).until(
        lambda d: d.execute_script("return document.readyState") == "complete" and d.find_elements("css selector", css)
    )


def label(driver: Any, answers: str) -> None:
    for key in answers:
        settle(driver, "#review")
        press(driver, key)
        settle(driver, "#review-status.saved")
        press(driver, "n")
        time.sleep(0.3)  # the next item loads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots" / "review")
    parser.add_argument("--width", type=int, default=1280)
    args = parser.parse_args()
    transcript = scripted_review_run(Path(tempfile.mkdtemp()))
    viewer = Viewer([transcript.parent], port=0).start()
    queue = f"{viewer.url}run/{KEY}/review?sample=10&seed=7"
    args.out.mkdir(parents=True, exist_ok=True)
    driver = browser(args.width, 1300)
    try:
        driver.get(queue)
        settle(driver, "#queue-name")
        press(driver, "alice\n")
        label(driver, "dad")
        settle(driver, "#review")
        press(driver, "c")
        press(driver, "the examinee never named the country")
        driver.save_screenshot(str(args.out / "queue.png"))
        press(driver, "\ue00c")  # Esc leaves the comment box
        label(driver, "daaaaaa")
        driver.get(f"{viewer.url}run/{KEY}/review?sample=10&seed=7&blind=1&annotator=carol")
        settle(driver, "#review")
        driver.save_screenshot(str(args.out / "blind-before.png"))
        press(driver, "2")
        settle(driver, "#revealed:not([hidden])")
        driver.save_screenshot(str(args.out / "blind-after.png"))
        driver.execute_script("window.localStorage.clear()")
        driver.get(queue)
        settle(driver, "#queue-name")
        press(driver, "bob\n")
        label(driver, "aaaaa")
        settle(driver, "#people")
        driver.save_screenshot(str(args.out / "agreement.png"))
        first = driver.find_element("css selector", "#people a").get_attribute("href")
        driver.get(first)
        settle(driver, ".labels-given")
        driver.execute_script("document.getElementById('review').scrollIntoView()")
        driver.save_screenshot(str(args.out / "session.png"))
        driver.get(f"{viewer.url}run/{KEY}?labels=people+disagree")
        settle(driver, "table.sessions")
        driver.save_screenshot(str(args.out / "sessions-filter.png"))
    finally:
        driver.quit()
        viewer.stop()
    for name in sorted(p.name for p in args.out.glob("*.png")):
        print(args.out / name)


if __name__ == "__main__":
    main()
