"""Screenshots of how replies, tables, comparisons, charts and a whole-run export read, before and after a change:
real transcripts written by the ``voirdire`` command (scripted models, a fake OpenAI-compatible oracle on 127.0.0.1),
shown by the viewer in Debian's headless chromium; terminal output (``voirdire show`` at 80 columns) is shown as a
page of monospace text so it can be photographed the same way.

    python bench/readable_screenshots.py --out docs/screenshots/readable --tag after
"""

from __future__ import annotations

import argparse
import contextlib
import html
import io
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from tests.charts.conftest import dcr  # noqa: E402
from tests.web import runs  # noqa: E402
from tests.web.test_compare_browser import two_runs  # noqa: E402
from voirdire.cli import main as cli  # noqa: E402
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


def terminal(args: list[str], columns: int = 80) -> str:
    """What ``voirdire ARGS`` prints at a terminal of ``columns`` (without colour)."""
    os.environ["COLUMNS"] = str(columns)
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        cli(args)
    return buffer.getvalue()


def text_page(folder: Path, name: str, title: str, text: str, columns: int = 80) -> Path:
    """Terminal text as a page: monospace, a ruler at ``columns``."""
    page = folder / f"{name}.html"
    page.write_text(
        "<!doctype html><meta charset=utf-8><body style='margin:0;background:#1d1f21;color:#e8e8e8'>"
        f"<div style='font:13px sans-serif;padding:6px 10px;background:#333'>{html.escape(title)}</div>"
        f"<pre style='font:13px/1.3 DejaVu Sans Mono,monospace;margin:8px 10px;width:{columns}ch;"
        f"border-right:1px dashed #777;white-space:pre'>{html.escape(text)}</pre>",
        encoding="utf-8",
    )
    return page


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots" / "readable")
    parser.add_argument("--tag", default="after", help="suffix of the files: before or after")
    parser.add_argument("--width", type=int, default=1280)
    args = parser.parse_args()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    folder, scripts, other, pages = (Path(tempfile.mkdtemp()) for _ in range(4))
    os.chdir(tempfile.mkdtemp())
    runs.sampled_entities(folder)
    runs.paraphrase(folder)
    runs.dcr(folder, scripts)
    runs.no_data(folder)
    two_runs(folder, scripts)
    runs.cross_examination(other, scripts)  # the same file name in a second folder
    dcr(other, scripts)
    export = folder / "examine-export.html"
    cli(["export-html", str(folder / "examine.jsonl"), "-o", str(export)])
    show_k = terminal(["show", str(folder / "entities-k11.jsonl")])
    show_dcr = terminal(["show", str(folder / "dcr.jsonl")])
    compare_text = terminal(["compare", str(folder / "examine.jsonl"), str(other / "examine.jsonl"),
                             str(folder / "skeptic.jsonl")])  # fmt: skip
    viewer = Viewer([folder, other], port=0).start()
    lines = (folder / "entities-k11.jsonl").open()
    sid = next(json.loads(line)["session_id"] for line in lines if '"session_start"' in line)
    two = "compare?run=examine.jsonl&run=examine.jsonl~2&run=skeptic.jsonl&by=decision"
    shots: dict[str, tuple[str, int]] = {
        "samples": (viewer.url + f"run/entities-k11.jsonl/session/{sid}", 1500),
        "samples-terminal": (text_page(pages, "k", "voirdire show entities-k11.jsonl", show_k).as_uri(), 1500),
        "paraphrase-table": (viewer.url + "run/paraphrase.jsonl", 1100),
        "dcr-terminal": (text_page(pages, "dcr", "voirdire show dcr.jsonl (80 columns)", show_dcr).as_uri(), 1400),
        "runs-two-folders": (viewer.url, 700),
        "compare": (viewer.url + two, 1000),
        "compare-item": (viewer.url + two.replace("compare?", "compare/item?") + "&item=paris", 1300),
        "compare-terminal": (text_page(pages, "cmp", "voirdire compare (80 columns)", compare_text).as_uri(), 600),
        "charts-dcr": (viewer.url + "run/dcr.jsonl/charts", 1300),
        "charts-nodata": (viewer.url + "run/nodata.jsonl/charts", 1300),
        "charts-examine": (viewer.url + "run/examine.jsonl/charts", 1300),
        "export": (export.as_uri(), 1600),
    }
    try:
        for name, (url, height) in shots.items():
            driver = browser(args.width, height)
            try:
                driver.get(url)
                if name in ("paraphrase-table",):
                    driver.find_element("css selector", "a.session-link").click()
                if name == "samples":  # the samples of the first extraction, opened
                    for d in driver.find_elements("css selector", "details.samples")[:1]:
                        d.click()
                driver.execute_script("return Promise.all([...document.images].map(i => i.decode().catch(() => null)))")
                if name == "samples":
                    first = driver.find_elements("css selector", ".kind-reply")
                    if first:
                        driver.execute_script("arguments[0].scrollIntoView(); window.scrollBy(0, -60)", first[0])
                if name == "paraphrase-table":
                    cards = driver.find_elements("css selector", ".note .card")
                    table = next((c for c in cards if "alignment" in c.text), None)
                    if table is not None:
                        driver.execute_script("arguments[0].scrollIntoView(); window.scrollBy(0, -60)", table)
                target = out / f"{name}-{args.tag}.png"
                driver.save_screenshot(str(target))
                print(target)
            finally:
                driver.quit()
    finally:
        viewer.stop()


if __name__ == "__main__":
    main()
