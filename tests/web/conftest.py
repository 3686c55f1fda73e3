"""Fixtures of the viewer tests: real transcripts of every landed protocol in a temporary folder, a viewer serving
them on 127.0.0.1, and a headless Debian chromium driven by Selenium (skipped only where chromium is absent and
this is not CI; under CI=true a missing browser fails)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web import runs
from voirdire.web.server import Viewer

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


@pytest.fixture(scope="session")
def transcripts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("transcripts")
    scripts = tmp_path_factory.mktemp("scripts")
    return {
        "cross_examination": runs.cross_examination(folder, scripts),
        "majority": runs.majority(folder, scripts),
        "no_data": runs.no_data(folder),
        "qa_lexical": runs.qa_lexical(folder, scripts),
        "qa_entailment": runs.qa_entailment(folder, scripts),
        "dcr": runs.dcr(folder, scripts),
        "entities": runs.entities(folder),
        "paraphrase": runs.paraphrase(folder),
        "escapes": runs.escapes(folder, scripts),
        "hostile": runs.hostile_run(folder, scripts),
        "hostile_fields": runs.hostile_fields(folder),
    }


@pytest.fixture(scope="session")
def viewer(transcripts: dict[str, Path]) -> Iterator[Viewer]:
    folder = next(iter(transcripts.values())).parent
    v = Viewer([folder], port=0).start()
    yield v
    v.stop()


def _no_browser(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}: CI must run the browser tests (.ci/run installs chromium and chromium-driver)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not (CHROMIUM.exists() or shutil.which("chromium")) or not CHROMEDRIVER.exists():
        _no_browser("Debian chromium and chromium-driver are not installed (apt-get install chromium chromium-driver)")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _no_browser("selenium is not installed (pip install -e '.[dev]')")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM if CHROMIUM.exists() else shutil.which("chromium"))
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(arg)
    options.add_argument("--window-size=1400,1000")
    # The driver path is given, so Selenium Manager never looks for (or downloads) a browser or driver.
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(60)  # a bound for a page that never loads; a busy machine only takes longer
    yield driver
    driver.quit()
