"""One item across runs: from a session (or a compare page row), every session of its item in the viewed runs,
repeats and other protocols included, with verdicts and the first turn where each conversation differs."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from voirdire.transcript import Message, RoleBinding, RunHeader, SessionStart, TranscriptWriter, Verdict
from voirdire.web.across import Divergence, divergence
from voirdire.web.app import create_app
from voirdire.web.catalog import Library


def write(path: Path, protocol: str, model: str, sessions: dict[str, tuple[str, str, list[str], str]]) -> None:
    """``sessions``: session id -> (item id, claim, the examinee's replies, decision)."""
    run_id = f"run-{path.stem}"
    with TranscriptWriter(path) as w:
        w.write(RunHeader(run_id=run_id, protocol=protocol, roles={"examinee": RoleBinding(spec=model)}))
        for sid, (item, claim, replies, decision) in sessions.items():
            base = {"run_id": run_id, "session_id": sid}
            w.write(SessionStart(**base, seq=1, item_id=item, item={"id": item, "claim": claim}))
            seq = 2
            for reply in replies:
                w.write(Message(**base, seq=seq, sender="examiner", receiver="examinee", content="Where is it?"))
                w.write(Message(**base, seq=seq + 1, sender="examinee", receiver="examiner", content=reply))
                seq += 2
            w.write(Verdict(**base, seq=seq, decision=decision, evidence=[]))


@pytest.fixture
def client(tmp_path: Path) -> TestClient:
    claim = "The Eiffel Tower is in Paris."
    write(tmp_path / "a.jsonl", "cross_examination", "openai:gpt-4o-mini",
          {"t1": ("t1", claim, ["In Paris.", "On the Seine."], "correct"), "t2": ("t2", "Other.", ["No."], "correct")})
    write(tmp_path / "b.jsonl", "cross_examination", "openai:gpt-4o",
          {"t1": ("t1", claim, ["In Paris.", "In Lyon."], "incorrect")})
    write(tmp_path / "rep.jsonl", "dcr", "ollama:llama3",
          {"t1@r1": ("t1", claim, ["In Paris.", "On the Seine."], "correct"), "t1@r2": ("t1", claim, [], "correct")})
    write(tmp_path / "renamed.jsonl", "dcr", "ollama:llama3", {"x9": ("x9", claim, ["Berlin."], "incorrect")})
    return TestClient(create_app(Library([tmp_path], persist=False)), base_url="http://127.0.0.1")


def rows(page: str) -> list[str]:
    return re.findall(r'<tr class="(?:origin)?" id="across-\d+">(.*?)</tr>', page, re.S)


def test_every_session_of_the_item_with_verdicts_and_divergence(client: TestClient) -> None:
    session = client.get("/run/a.jsonl/session/t1")
    link = html.unescape(re.search(r'class="across-link" href="([^"]+)"', session.text)[1])  # type: ignore[index]
    page = client.get(link)
    assert page.status_code == 200
    found = rows(page.text)
    assert len(found) == 5 and "t2" not in page.text.split("<table")[1].split("</table>")[0]
    origin, *others = found
    assert ">t1<" in origin and "the session compared with" in origin
    by_sid = {re.search(r"session/([^\"?]+)\"", r)[1]: r for r in others}  # type: ignore[index]
    assert set(by_sid) == {"t1", "t1%40r1", "t1%40r2", "x9"}
    b = next(r for r in others if "b.jsonl" in r)
    assert "incorrect" in b and "openai:gpt-4o<" in b
    assert "differs from [1] at turn 4" in b and "/run/b.jsonl/session/t1?prompts=1#m5" in b  # the second answer
    assert "same turns as [1]" in by_sid["t1%40r1"] and "dcr" in by_sid["t1%40r1"]  # a repeat under another protocol
    assert "at turn 1" in by_sid["t1%40r2"] and "ends before it" in by_sid["t1%40r2"]
    assert "(same text)" in by_sid["x9"]  # the same claim under another item id
    assert page.text.count('class="side"') == 5  # side by side


def test_the_compare_page_opens_it(client: TestClient) -> None:
    compare = client.get("/compare", params=[("run", "a.jsonl"), ("run", "b.jsonl")])
    links = [html.unescape(h) for h in re.findall(r'class="across-link" href="([^"]+)"', compare.text)]
    assert "/across?key=a.jsonl&item=t1" in links
    page = client.get("/across?key=a.jsonl&item=t1")
    assert page.status_code == 200 and len(rows(page.text)) == 5
    assert client.get("/across?key=a.jsonl&item=nope").status_code == 404
    assert client.get("/across?key=nope.jsonl&sid=t1").status_code == 404


def test_divergence_of_two_conversations() -> None:
    a = [("x", "hi", 1), ("y", "yo", 2)]
    assert divergence(a, list(a)) is None
    assert divergence(a, [("x", "hi", 5), ("y", "no", 6)]) == Divergence(2, 6, 2)
    assert divergence(a, a[:1]) == Divergence(2, None, 2)
    assert divergence([], [("x", "hi", 3)]) == Divergence(1, 3, None)
