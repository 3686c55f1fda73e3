"""Evidence you can click: on real runs of LMvLM, DCR and the oracle–checker, a verdict's evidence line links to
the turn it quotes (the examiner's deciding answer, the checker's reason, the checker's draw of test N), and the
linked element is on the page and holds the words."""

from __future__ import annotations

import html
import re
from pathlib import Path
from urllib.parse import unquote

import pytest
from starlette.testclient import TestClient

from voirdire.web.app import create_app
from voirdire.web.catalog import Library
from voirdire.web.evidence import quotes

LINK = re.compile(r'<a class="evidence-link" href="#(m(\d+))(?::~:text=([^"]*))?"[^>]*>(.*?)</a>', re.S)


def element(page: str, anchor: str) -> str:
    """The text of the turn with id ``anchor`` (up to the next turn)."""
    start = page.index(f'id="{anchor}"')
    end = page.find('<div class="turn', start + 1)
    return html.unescape(re.sub(r"<[^>]+>", "", page[start : end if end > 0 else len(page)]))


def links(client: TestClient, key: str) -> list[tuple[str, str, str, str]]:
    """Every evidence link on the session pages of run ``key``: (anchor, seq, words, evidence line)."""
    listing = client.get(f"/run/{key}").text
    sids = dict.fromkeys(re.findall(rf'href="/run/{re.escape(key)}/session/([^"?#]+)"', listing))
    out = []
    for sid in list(sids)[:6]:
        page = client.get(f"/run/{key}/session/{sid}")
        assert page.status_code == 200
        for anchor, seq, words, line in LINK.findall(page.text):
            words = unquote(words or "")
            assert f'id="{anchor}"' in page.text  # the link lands on the page
            if words:
                assert " ".join(words.split()) in " ".join(element(page.text, anchor).split())
            out.append((anchor, seq, words, html.unescape(line)))
    return out


@pytest.fixture(scope="module")
def client(transcripts: dict[str, Path]) -> TestClient:
    folder = next(iter(transcripts.values())).parent
    return TestClient(create_app(Library([folder], persist=False)), base_url="http://127.0.0.1")


def test_lmvlm_evidence_links_the_examiners_deciding_answer(client: TestClient, transcripts: dict[str, Path]) -> None:
    found = links(client, transcripts["cross_examination"].name)
    assert found
    for _anchor, _seq, words, line in found:
        assert words == line.strip()  # the conclusion, word for word
        assert line.startswith("The claim is") or "tell" in line


def test_dcr_evidence_links_the_checkers_reason(client: TestClient, transcripts: dict[str, Path]) -> None:
    found = links(client, transcripts["dcr"].name)
    assert found
    assert all(any(w == q for q in quotes(line)) for _, _, w, line in found if w)


def test_oracle_checker_tests_link_the_checkers_draw(client: TestClient, transcripts: dict[str, Path]) -> None:
    found = [f for f in links(client, transcripts["entities"].name) if f[3].startswith("test ")]
    assert found
    by_test = {int(re.match(r"test (\d+)", line)[1]): int(seq) for _, seq, _, line in found}  # type: ignore[index]
    assert sorted(by_test.values()) == [by_test[n] for n in sorted(by_test)]  # test N: the N-th draw, in order


def test_a_line_that_quotes_nothing_stays_text() -> None:
    assert quotes("ok") == []
    assert quotes("-1 Paris is in Spain.: Paris is in France.") == [
        "-1 Paris is in Spain.: Paris is in France.",
        "Paris is in Spain.: Paris is in France.",
        "Paris is in France.",  # then the parts, longest first
        "Paris is in Spain.",
    ]
