"""The viewer's pages over HTTP (Starlette's test client): runs, filtered and searched sessions with paging, a
session as a chat, the report, the export, the live version probe, security headers and the host check."""

from __future__ import annotations

import html
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from voirdire.chat.terminal import render_chat
from voirdire.chat.turns import Bubble, Divider, Failure, chat_of
from voirdire.reports.prices import Price, Prices
from voirdire.transcript import Message, RunHeader, SessionStart, TranscriptWriter, Verdict, load
from voirdire.web.app import create_app
from voirdire.web.catalog import Library
from voirdire.web.render import SERVER_CSP


@pytest.fixture(scope="module")
def client(transcripts: dict[str, Path]) -> TestClient:
    folder = next(iter(transcripts.values())).parent
    app = create_app(Library([folder]), prices=Prices({"gpt-4o-mini": Price(0.15, 0.6)}))
    return TestClient(app, base_url="http://127.0.0.1")


class Tags(HTMLParser):
    """Every start tag of a page with its attributes, as a browser's parser sees them."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.seen.append((tag, attrs))


def text_of(page: str) -> str:
    """The page's visible text, roughly: tags dropped, entities decoded."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def test_runs_list_every_transcript_with_its_protocol_models_and_counts(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200
    body = page.text
    for key, protocol in [
        ("examine.jsonl", "cross_examination"),
        ("majority.jsonl", "cross_examination"),
        ("nodata.jsonl", "no_data"),
        ("qa-lexical.jsonl", "qa_lexical"),
        ("qa-entailment.jsonl", "qa_entailment"),
    ]:
        row = body[body.index(f'href="/run/{key}"') :].split("</tr>")[0]
        assert protocol in row, key
    examine = text_of(body[body.index('href="/run/examine.jsonl"') :].split("</tr>")[0])
    assert "examiner scripted:" in examine and " 2/2 " in examine  # both verdicts checked against gold
    assert "questions.jsonl" not in body  # a dataset beside the transcripts is not a run


def test_every_response_carries_the_security_headers(client: TestClient) -> None:
    for url in ("/", "/run/examine.jsonl", "/run/examine.jsonl/session/paris", "/static/viewer.css", "/nope"):
        r = client.get(url)
        assert r.headers["content-security-policy"] == SERVER_CSP, url
        assert r.headers["x-content-type-options"] == "nosniff" and r.headers["x-frame-options"] == "DENY"
    assert "'unsafe-inline'" not in SERVER_CSP and "script-src 'self'" in SERVER_CSP


def test_requests_for_another_host_are_refused(client: TestClient) -> None:
    assert client.get("/", headers={"host": "attacker.example"}).status_code == 400
    assert client.get("/", headers={"host": "localhost:7788"}).status_code == 200


def test_sessions_filter_search_and_report(client: TestClient) -> None:
    def ids(query: str) -> list[str]:
        page = client.get("/run/examine.jsonl" + query)
        assert page.status_code == 200
        return re.findall(r'class="session-link" href="/run/examine.jsonl/session/([^"]+)"', page.text)

    assert ids("") == ["paris", "rome"]
    assert ids("?verdict=incorrect") == ["rome"] and ids("?accepted=yes") == ["paris"]
    assert ids("?gold=right") == ["paris", "rome"] and ids("?gold=wrong") == []
    assert ids("?failures=with") == ["paris", "rome"] and ids("?errors=with") == []
    assert ids("?status=finished&q=italy") == ["rome"] and ids("?q=nothing+like+this") == []
    assert ids("?gold=bogus&page=x") == ["paris", "rome"]  # unknown values are no filter
    report = client.get("/run/examine.jsonl/report")
    assert "reject incorrect" in report.text and "claims correct" in report.text
    assert client.get("/run/missing.jsonl").status_code == 404


def test_paging_through_many_sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "many.jsonl"
    with TranscriptWriter(path) as w:
        w.write(RunHeader(run_id="r", protocol="toy"))
        for n in range(120):
            sid = f"s{n:03d}"
            w.write(SessionStart(run_id="r", session_id=sid, seq=1, item_id=sid, item={"text": f"item {n}"}))
            w.write(Verdict(run_id="r", session_id=sid, seq=2, decision="yes" if n % 3 else "no", accepted=n % 3 > 0))
    client = TestClient(create_app(Library([path])), base_url="http://127.0.0.1")
    first = client.get("/run/many.jsonl").text
    assert "120 of 120 sessions · page 1 of 3" in first and first.count('class="session-link"') == 50
    assert 'href="?page=2"' in first
    last = client.get("/run/many.jsonl?page=3").text
    assert last.count('class="session-link"') == 20 and "s119" in last
    assert "page 1 of 1" not in client.get("/run/many.jsonl?verdict=no").text  # 40 sessions: one page
    assert "40 of 120 sessions" in client.get("/run/many.jsonl?verdict=no&page=9").text
    monkeypatch.setattr("voirdire.web.app.EXPORT_LIMIT", 100)
    refused = client.get("/run/many.jsonl/export")
    assert refused.status_code == 413 and "120 sessions are too many for one page" in refused.text
    assert client.get("/run/many.jsonl/export?session=s007").status_code == 200


def test_a_session_as_a_chat(client: TestClient) -> None:
    page = client.get("/run/examine.jsonl/session/rome").text
    assert 'class="turn bubble left c36 kind-reply"' in page and 'class="turn bubble right c33 kind-reply"' in page
    assert 'title="scripted:' in page  # the role's model on hover
    shown = text_of(page)
    assert "What is the capital of Italy?" in shown and "Rome" in shown
    assert "setup" in shown and "followup_ask" in shown and "round 1" in shown
    assert "parse failure" in shown and "treated as No" in shown
    assert "Verdict: incorrect" in shown and "rejected" in shown and "right vs gold" in shown
    assert "evidence" in shown and "The claim is incorrect." in shown
    assert "tokens ·" in shown and "Please answer the following questions regarding your claim." in shown  # prompts
    assert 'rel="prev" href="/run/examine.jsonl/session/paris"' in page
    assert client.get("/run/examine.jsonl/session/nope").status_code == 404


def test_majority_examinations_are_lanes(client: TestClient) -> None:
    page = client.get("/run/majority.jsonl/session/" + next_session(client, "majority.jsonl")).text
    assert page.count('class="lane"') == 3 and 'class="lanes"' in page
    for lane in ("e1", "e2", "e3"):
        assert f'<div class="lane-name">{lane}</div>' in page


def next_session(client: TestClient, key: str) -> str:
    return re.findall(r'class="session-link" href="/run/[^/]+/session/([^"]+)"', client.get(f"/run/{key}").text)[0]


def test_terminal_and_web_show_the_same_chat(client: TestClient, transcripts: dict[str, Path]) -> None:
    for name in ("cross_examination", "no_data", "qa_entailment"):
        t = load(transcripts[name])
        for sid, s in t.sessions.items():
            chat = chat_of(s, t.header)
            terminal = render_chat(chat, prompts=True)
            web = text_of(client.get(f"/run/{transcripts[name].name}/session/{sid}?prompts=1").text)
            for turn in chat.turns:
                shown = (
                    [turn.text.strip()]
                    if isinstance(turn, Bubble)
                    else [turn.state]
                    if isinstance(turn, Divider) and not turn.quiet
                    else [turn.outcome]
                    if isinstance(turn, Failure)
                    else []
                )
                for text in shown:
                    if len(text) < 90 and "\n" not in text:
                        assert text in web, (name, sid, text)
                        assert text in terminal, (name, sid, text)


def test_model_text_is_escaped_everywhere(client: TestClient) -> None:
    pages = [client.get("/").text]
    for key in ("hostile.jsonl", "hostile-fields.jsonl"):
        listing = client.get(f"/run/{key}").text
        pages.append(listing)
        for sid in re.findall(r'class="session-link" href="([^"]+)"', listing):
            pages += [client.get(sid).text, client.get(sid + "?prompts=1").text]
        pages.append(client.get(f"/run/{key}/export").text)
    assert len(pages) == 9  # runs; per transcript: its sessions, each session with and without prompts, export
    for page in pages:
        assert "<script>window" not in page and "<img src=x" not in page and 'href="javascript:' not in page
        tags = Tags()
        tags.feed(page)
        assert not [a for _, attrs in tags.seen for a, _ in attrs if a.startswith("on") or a == "style"]
        assert [t for t, _ in tags.seen if t in ("iframe", "object", "embed")] == []
        images = [str(dict(a).get("src")) for t, a in tags.seen if t == "img"]  # only the viewer's own charts
        assert all(src.startswith(("data:image/svg+xml", "/run/", "/compare/")) for src in images), images
        scripts = [dict(a).get("src") for t, a in tags.seen if t == "script"]  # the viewer's own, the review panel's
        assert scripts in ([], ["/static/viewer.js"], ["/static/viewer.js", "/static/review.js"])
        assert not [a for t, a in tags.seen if t == "a" and str(dict(a).get("href")).lower().startswith("javascript")]
        own = ('<script src="/static/viewer.js" defer></script>', '<script src="/static/review.js" defer></script>')
        assert "<script" not in page.replace(own[0], "").replace(own[1], "")
    assert all("&lt;script&gt;window.pwned=1&lt;/script&gt;" in page for page in pages[1:])


def test_the_version_probe_changes_when_the_transcript_grows(client: TestClient, tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    with TranscriptWriter(path) as w:
        w.write(RunHeader(run_id="r", protocol="toy"))
        w.write(SessionStart(run_id="r", session_id="a", seq=1, item_id="a", item={"text": "hi"}))
    live = TestClient(create_app(Library([tmp_path])), base_url="http://127.0.0.1")
    probe = "/api/version?page=session&key=live.jsonl&session=a"
    before = live.get(probe).json()["version"]
    run_before = live.get("/api/version?page=run&key=live.jsonl").json()["version"]
    with TranscriptWriter(path) as w:
        w.write(Message(run_id="r", session_id="a", seq=2, sender="judge", receiver="moderator", content="later"))
    assert live.get(probe).json()["version"] != before
    assert live.get("/api/version?page=run&key=live.jsonl").json()["version"] != run_before
    assert "later" in live.get("/run/live.jsonl/session/a").text
    shutil.copy(path, tmp_path / "second.jsonl")  # a transcript that appears later is listed
    assert "second.jsonl" in live.get("/").text
