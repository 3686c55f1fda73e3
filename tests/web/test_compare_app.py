"""The charts and comparison pages over HTTP (Starlette's test client): SVG images under the viewer's policy,
the numbers of ``voirdire compare``, and errors as pages."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from tests.web.test_compare_browser import two_runs
from voirdire.web.app import create_app
from voirdire.web.catalog import Library
from voirdire.web.render import SERVER_CSP


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    folder, scripts = tmp_path_factory.mktemp("compare-app"), tmp_path_factory.mktemp("compare-app-scripts")
    two_runs(folder, scripts)
    (folder / "other.jsonl").write_text((folder / "examine.jsonl").read_text().replace('"paris"', '"lyon"')
                                        .replace('"rome"', '"milan"'))  # fmt: skip
    yield TestClient(create_app(Library([folder], persist=False)), base_url="http://127.0.0.1")


def test_a_run_charts_are_svg_images_under_the_viewer_policy(client: TestClient) -> None:
    page = client.get("/run/examine.jsonl/charts")
    assert page.status_code == 200 and page.headers["content-security-policy"] == SERVER_CSP
    verdicts = '<img src="/run/examine.jsonl/chart/verdicts.svg" alt="Verdicts of 2 sessions: 2/2 agree with gold'
    assert verdicts in page.text
    image = client.get("/run/examine.jsonl/chart/verdicts.svg")
    assert image.status_code == 200 and image.headers["content-type"] == "image/svg+xml"
    assert (
        image.headers["content-security-policy"] == SERVER_CSP and image.headers["x-content-type-options"] == "nosniff"
    )
    assert ET.fromstring(image.content).tag == "{http://www.w3.org/2000/svg}svg"
    assert client.get("/run/examine.jsonl/chart/nothing.svg").status_code == 404


def test_the_comparison_page_has_the_numbers_of_voirdire_compare(client: TestClient) -> None:
    picker = client.get("/compare")
    assert picker.status_code == 200 and 'name="run" value="skeptic.jsonl"' in picker.text
    page = client.get("/compare", params=[("run", "examine.jsonl"), ("run", "skeptic.jsonl")])
    assert page.status_code == 200
    assert '<td class="num agreement">50.0%</td>' in page.text and '<td class="num kappa">0.000</td>' in page.text
    assert page.text.count('class="disagree"') == 1 and page.text.count('class="agree"') == 1
    only = client.get("/compare", params=[("run", "examine.jsonl"), ("run", "skeptic.jsonl"), ("only", "disagree")])
    assert ">paris<" in only.text and ">rome<" not in only.text
    heat = client.get("/compare/chart/agreement.svg", params=[("run", "examine.jsonl"), ("run", "skeptic.jsonl")])
    assert heat.status_code == 200 and heat.headers["content-type"] == "image/svg+xml"
    side = client.get("/compare/item", params=[("run", "examine.jsonl"), ("run", "skeptic.jsonl"), ("item", "rome")])
    assert side.status_code == 200 and side.text.count('<section class="side">') == 2


def test_runs_without_shared_items_and_unknown_runs_are_error_pages(client: TestClient) -> None:
    apart = client.get("/compare", params=[("run", "examine.jsonl"), ("run", "other.jsonl")])
    assert apart.status_code == 400 and "no item in common" in apart.text
    assert client.get("/compare", params=[("run", "examine.jsonl"), ("run", "nope.jsonl")]).status_code == 404
    assert client.get("/compare", params=[("run", "examine.jsonl"), ("by", "mood")]).status_code == 400
    missing = client.get("/compare/item", params=[("run", "examine.jsonl"), ("item", "atlantis")])
    assert missing.status_code == 404
