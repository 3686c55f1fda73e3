"""The screenshots in docs/charts.md: a DCR run's charts page and the comparison page of two LMvLM runs (with an
item's two sessions side by side), from real transcripts written by the ``voirdire`` command with scripted models,
shown by the viewer in Debian's headless chromium.

    python bench/compare_screenshots.py --out docs/screenshots
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from tests.charts.conftest import dcr  # noqa: E402
from tests.web.test_compare_browser import two_runs  # noqa: E402
from voirdire.web.server import Viewer  # noqa: E402


def browser(width: int, height: int) -> object:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--hide-scrollbars"):
        options.add_argument(arg)
    options.add_argument(f"--window-size={width},{height}")
    return webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--width", type=int, default=1280)
    args = parser.parse_args()
    folder, scripts = Path(tempfile.mkdtemp()), Path(tempfile.mkdtemp())
    two_runs(folder, scripts)
    dcr(folder, scripts)
    viewer = Viewer([folder], port=0).start()
    shots = {
        "charts.png": (viewer.url + "run/dcr.jsonl/charts", 1100),
        "compare.png": (viewer.url + "compare?run=examine.jsonl&run=skeptic.jsonl&by=decision", 1000),
        "compare-item.png": (viewer.url + "compare/item?run=examine.jsonl&run=skeptic.jsonl&item=paris", 1400),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        for name, (url, height) in shots.items():
            driver = browser(args.width, height)
            try:
                driver.get(url)  # type: ignore[attr-defined]
                driver.execute_script(  # type: ignore[attr-defined]
                    "return Promise.all([...document.images].map(i => i.decode().catch(() => null)))"
                )
                driver.save_screenshot(str(args.out / name))  # type: ignore[attr-defined]
            finally:
                driver.quit()  # type: ignore[attr-defined]
            print(args.out / name)
    finally:
        viewer.stop()


if __name__ == "__main__":
    main()
