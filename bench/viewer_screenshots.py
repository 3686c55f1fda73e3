"""The screenshots in docs/viewer.md: real transcripts of every landed protocol (written by the ``voirdire`` command
with scripted models, as the browser tests write them) and a synthetic 1,000-session run, shown by the viewer in
Debian's headless chromium.

    python bench/viewer_screenshots.py --out docs/screenshots
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from viewer_transcript import generate  # noqa: E402

from tests.web import runs  # noqa: E402
from voirdire.web.server import Viewer  # noqa: E402


def browser(width: int) -> object:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--hide-scrollbars"):
        options.add_argument(arg)
    options.add_argument(f"--window-size={width},900")
    return webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--max-height", type=int, default=2400)
    args = parser.parse_args()
    out = args.out.resolve()
    folder, hostile = Path(tempfile.mkdtemp()), Path(tempfile.mkdtemp())
    os.chdir(tempfile.mkdtemp())  # scripts by relative path, so the models read "scripted:examiner.yaml"
    runs.cross_examination(folder, Path())
    runs.majority(folder, Path())
    runs.no_data(folder)
    runs.qa_entailment(folder, Path())
    runs.dcr(folder, Path())
    runs.entities(folder)
    runs.paraphrase(folder)
    runs.hostile_fields(hostile)
    generate(folder / "synthetic-1000.jsonl", 1000)
    viewer = Viewer([folder], port=0).start()
    apart = Viewer([hostile], port=0).start()
    driver = browser(args.width)
    shots = {
        "runs.png": viewer.url,
        "sessions.png": viewer.url + "run/synthetic-1000.jsonl?gold=wrong",
        "session.png": viewer.url + "run/examine.jsonl/session/rome",
        "majority.png": viewer.url + "run/majority.jsonl",
        "no-data.png": viewer.url + "run/nodata.jsonl/session/seed0-000",
        "qa-entailment.png": viewer.url + "run/qa-entailment.jsonl/session/evouna-0-fid",
        "escaped.png": apart.url + "run/hostile-fields.jsonl",
        "dcr.png": viewer.url + "run/dcr.jsonl",
        "entities.png": viewer.url + "run/entities.jsonl",
        "paraphrase.png": viewer.url + "run/paraphrase.jsonl",
    }
    out.mkdir(parents=True, exist_ok=True)
    try:
        for name, url in shots.items():
            driver.get(url)  # type: ignore[attr-defined]
            if name in ("majority.png", "escaped.png", "dcr.png", "entities.png", "paraphrase.png"):  # first session
                driver.find_element("css selector", "a.session-link").click()  # type: ignore[attr-defined]
            if name == "session.png":  # one reply's rendered prompt, opened
                driver.find_elements("css selector", ".kind-reply details.rendered")[2].click()  # type: ignore[attr-defined]
            if name == "entities.png":  # from the first linearity test on
                driver.set_window_size(args.width, 1500)  # type: ignore[attr-defined]
                cards = driver.find_elements("css selector", ".note .card")  # type: ignore[attr-defined]
                first = next(c for c in cards if c.text.startswith("linearity"))
                driver.execute_script("arguments[0].scrollIntoView(); window.scrollBy(0, -80)", first)  # type: ignore[attr-defined]
                driver.save_screenshot(str(out / name))  # type: ignore[attr-defined]
                print(out / name)
                continue
            height = driver.execute_script("return document.body.scrollHeight")  # type: ignore[attr-defined]
            cap = 1000 if name == "sessions.png" else args.max_height  # the first twenty rows say enough
            driver.set_window_size(args.width, min(height, cap))  # type: ignore[attr-defined]
            driver.save_screenshot(str(out / name))  # type: ignore[attr-defined]
            print(out / name)
    finally:
        driver.quit()  # type: ignore[attr-defined]
        viewer.stop()
        apart.stop()


if __name__ == "__main__":
    main()
