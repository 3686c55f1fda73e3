"""A verdict's guarantee is shown wherever the verdict is: the terminal chat (``voirdire show``, a run's own chat),
the viewer's session page, ``export-html``, and the ``--json`` of a run and of ``show``."""

from __future__ import annotations

import contextlib
import html
import io
import json
import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from voirdire.chat.terminal import render_chat
from voirdire.chat.turns import Outcome, chat_of
from voirdire.cli import main
from voirdire.transcript import load
from voirdire.web.app import create_app
from voirdire.web.catalog import Library

EXAMINER = """\
rules:
  - match: verify the correctness of the following claim
    reply: "1. Where is it?"
  - match: Do you have any follow-up questions
    reply: "No"
  - match: correct or incorrect\\?
    replies: ["The claim is incorrect.", "The claim is correct.", "The claim is incorrect."]
"""
EXAMINEE = """\
rules:
  - match: regarding your claim
    reply: "It is in France."
"""
CLAIM = "Lyon is the capital of France."


def examine(tmp_path: Path, *extra: str) -> list[str]:
    (tmp_path / "examiner.yaml").write_text(EXAMINER, encoding="utf-8")
    (tmp_path / "examinee.yaml").write_text(EXAMINEE, encoding="utf-8")
    return [
        "examine", CLAIM, "--majority", "--temperature", "0.7", "--no-progress", "--no-concurrent-examinations",
        "--model", f"examiner=scripted:{tmp_path / 'examiner.yaml'}",
        "--model", f"examinee=scripted:{tmp_path / 'examinee.yaml'}", *extra,
    ]  # fmt: skip


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    """One LMvLM (Majority) run through the command line, 2–1 to reject, and its ``--json`` summary."""
    folder = tmp_path_factory.mktemp("guarantee")
    out = folder / "majority.jsonl"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(examine(folder, "--out", str(out), "--json")) == 0
    return out, json.loads(printed.getvalue())


def session_id(out: Path) -> str:
    (sid,) = load(out).sessions
    return sid


def test_the_run_json_carries_each_verdicts_guarantee(run: tuple[Path, dict[str, object]]) -> None:
    out, payload = run
    verdicts = payload["verdicts"]
    assert isinstance(verdicts, dict)
    g = verdicts[session_id(out)]["guarantee"]
    assert g["kind"] == "vote_margin" and g["values"]["margin"] == "2–1"
    assert g["values"]["decisions"] == ["incorrect", "correct", "incorrect"]


def test_show_json_carries_the_guarantee(run: tuple[Path, dict[str, object]], capsys: pytest.CaptureFixture) -> None:
    out, _ = run
    assert main(["show", str(out), "--json"]) == 0
    (record,) = json.loads(capsys.readouterr().out)
    (verdict,) = [e for e in record["events"] if e["kind"] == "verdict"]
    assert verdict["guarantee"]["values"]["reject_votes"] == 2 and verdict["guarantee"]["values"]["accept_votes"] == 1


def test_the_terminal_chat_shows_the_guarantee(run: tuple[Path, dict[str, object]], capsys) -> None:  # type: ignore[no-untyped-def]
    out, _ = run
    t = load(out)
    (s,) = t.sessions.values()
    chat = chat_of(s, t.header)
    outcome = chat.turns[-1]
    assert isinstance(outcome, Outcome) and outcome.guarantee == s.verdict.guarantee  # type: ignore[union-attr]
    text = " ".join(render_chat(chat).split())
    assert "guarantee:" in text
    assert "2–1 majority of 3 examinations (split): the claim is false (rejected)" in text
    assert text.index("Verdict: INCORRECT") < text.index("guarantee:") < text.index("evidence:")
    assert main(["show", str(out)]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "guarantee: 2–1 majority of 3 examinations" in shown and "§4.1" in shown


def test_a_verdict_without_a_guarantee_prints_no_guarantee_line(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "single.jsonl"
    argv = [a for a in examine(tmp_path, "--out", str(out)) if a not in ("--majority", "--no-concurrent-examinations")]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "Verdict:" in printed and "guarantee" not in printed
    (s,) = load(out).sessions.values()
    assert s.verdict is not None and s.verdict.guarantee is None


def test_the_runs_own_chat_shows_the_guarantee(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(examine(tmp_path, "--out", str(tmp_path / "t.jsonl"))) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "guarantee: 2–1 majority of 3 examinations" in printed


def visible(page: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def test_the_viewers_session_page_shows_the_guarantee(run: tuple[Path, dict[str, object]]) -> None:
    out, _ = run
    client = TestClient(create_app(Library([out.parent])), base_url="http://127.0.0.1")
    page = client.get(f"/run/{out.name}/session/{session_id(out)}").text
    assert 'class="guarantee"' in page
    section = page[page.index('class="guarantee"') : page.index("</div>", page.index('class="guarantee"'))]
    text = visible(section)
    assert "2–1 majority of 3 examinations" in text and "margin 2–1" in text and "reject votes 2" in text
    assert 'decisions ["incorrect", "correct", "incorrect"]' in text and "§4.1" in text


def test_export_html_shows_the_guarantee(run: tuple[Path, dict[str, object]], tmp_path: Path) -> None:
    out, _ = run
    page_file = tmp_path / "run.html"
    assert main(["export-html", str(out), "-o", str(page_file)]) == 0
    text = visible(page_file.read_text(encoding="utf-8"))
    assert "guarantee 2–1 majority of 3 examinations (split)" in text and "accept votes 1" in text


def test_an_inspect_score_carries_the_guarantee(tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai")
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.solver import generate

    import voirdire.integrations.inspect as vi
    from tests.inspect_ai_scorers.test_scorers import mock_model

    examine(tmp_path)  # writes the scripts
    scorer = vi.scorer("cross_examination", examiner=f"scripted:{tmp_path / 'examiner.yaml'}",
                       examinee=f"scripted:{tmp_path / 'examinee.yaml'}", examinations=3,
                       concurrent_examinations=False, transcripts=str(tmp_path / "t"))  # fmt: skip
    task = Task(dataset=[Sample(input=CLAIM, target="")], solver=generate(), scorer=scorer)
    (log,) = eval(task, model=mock_model(), log_dir=str(tmp_path / "logs"), display="none")
    (sample,) = log.samples or []
    (score,) = sample.scores.values()  # type: ignore[union-attr]
    assert score.value == "I" and score.metadata is not None
    g = score.metadata["guarantee"]
    # greedy requests of one session are sent once (coalesced): the three examinations agree, 3–0
    assert g["kind"] == "vote_margin" and g["values"]["margin"] == "3–0" and g["values"]["reject_votes"] == 3
    (session,) = load(Path(score.metadata["transcript"])).sessions.values()
    assert session.verdict is not None and session.verdict.guarantee is not None
    assert g == session.verdict.guarantee.model_dump(mode="json")


def test_a_no_data_verdicts_bound_on_its_page_with_the_runs_r_and_phi(tmp_path: Path) -> None:
    out = tmp_path / "nodata.jsonl"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        argv = ["nodata", "--data", "ip", "--limit", "1", "--rounds", "2", "--phi", "0.9", "--out", str(out)]
        assert main([*argv, "--no-progress", "--json"]) == 0
    assert json.loads(printed.getvalue())["parameters"]["rounds"] == 2  # the run's r, reported with the run
    client = TestClient(create_app(Library([tmp_path])), base_url="http://127.0.0.1")
    page = client.get(f"/run/{out.name}/session/{session_id(out)}").text
    text = visible(page[page.index('class="guarantee"') :])
    assert "rounds 2 phi 0.9" in text and "lemma1 undetected 0.0625" in text
    (s,) = load(out).sessions.values()
    assert s.verdict is not None and s.verdict.guarantee is not None
    eq8 = s.verdict.guarantee.values["wrong_if_mislabelled"]
    assert eq8 == pytest.approx(1 - 0.9 + 0.9 * 0.0625)  # App. A.4 eq. (8) at r = 2, φ = 0.9
    assert f"wrong if mislabelled {json.dumps(eq8)}" in text and "§7.1 Lemma 1" in text
