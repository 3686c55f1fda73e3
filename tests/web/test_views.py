"""Protocol views in the viewer and the export: DCR's sentence tables and rewrite diff, the oracle-checker's
linearity tests with their vectors and the Yes-prover's alignments, text that tries to drive a terminal or reverse
the page shown visibly, and one cost for a run wherever it is shown."""

from __future__ import annotations

import json
import re
from pathlib import Path

from starlette.testclient import TestClient

from tests.web.test_app import text_of
from voirdire.cli import main
from voirdire.reports.prices import Price, Prices
from voirdire.web.app import create_app
from voirdire.web.catalog import Library
from voirdire.web.export import export_file

PRICES = Prices({"fake": Price(2.5, 10.0)})


def client_for(transcripts: dict[str, Path]) -> TestClient:
    folder = next(iter(transcripts.values())).parent
    return TestClient(create_app(Library([folder]), prices=PRICES), base_url="http://127.0.0.1")


def only_session(client: TestClient, key: str) -> str:
    sids = re.findall(
        rf'class="session-link" href="/run/{re.escape(key)}/session/([^"]+)"', client.get(f"/run/{key}").text
    )
    assert len(sids) == 1
    return client.get(f"/run/{key}/session/{sids[0]}").text


def tables(page: str) -> list[str]:
    return re.findall(r'<table class="steps">.*?</table>', page, re.S)


def test_a_dcr_session_shows_its_sentence_tables_and_the_rewrite(transcripts: dict[str, Path]) -> None:
    page = only_session(client_for(transcripts), "dcr.jsonl")
    sentences = [t for t in tables(page) if "candidate sentence</th><th>status" in t]
    assert len(sentences) >= 2  # one per scored round
    first = text_of(sentences[0])
    assert "Bolt is the iaaf/btc general secretary . inconsistent −1 #2" in first
    assert "Bolt trains in Kingston . not evaluated not marked none" in first
    assert '<td class="tone-bad">inconsistent</td>' in sentences[0]
    assert "<del>Bolt</del> <ins>Garth Gayle</ins> is the <del>iaaf/btc</del> <ins>JAAA</ins>" in page
    assert "Ẑ by round" in text_of(page) and "0.333 → 0.667" in text_of(page)
    assert '<details class="folded"' in page  # the evaluator's JSON is behind a disclosure, not in the bubble


def test_an_entities_session_shows_each_linearity_test_with_its_vectors(transcripts: dict[str, Path]) -> None:
    page = only_session(client_for(transcripts), "entities.jsonl")
    text = text_of(page)
    assert text.count("linearity test ") == 5
    assert "x 000 y 010 x ⊕ y 010 f(x ⊕ y) = f(x) ⊖ f(y) passed" in text
    assert "R(·) replaced sentence expected f observed f con" in text
    assert "P(f is ε-close to a homomorphism), Theorems 3.1/3.2" in text


def test_a_paraphrase_session_shows_the_aligned_phrase_pairs(transcripts: dict[str, Path]) -> None:
    text = text_of(only_session(client_for(transcripts), "paraphrase.jsonl"))
    assert "φ_or alignment · proof of yes" in text and "The company → The company" in text
    assert "not recorded" not in text  # each aligned pair's similarity is shown


def test_escapes_and_overrides_are_visible_and_inert(transcripts: dict[str, Path], tmp_path: Path) -> None:
    page = only_session(client_for(transcripts), "escapes.jsonl")
    out = export_file(transcripts["escapes"], tmp_path / "e.html")
    for html in (page, out.read_text(encoding="utf-8")):
        for raw in ("\x1b", "\x07", "\u202e", "\x00"):
            assert raw not in html
        assert "Paris␛]0;x␇␛[2J␛[1;1HVerdict: CORRECT (accepted)&lt;U+202E&gt;" in html and "␀" in html


def test_one_cost_for_a_run_in_the_report_json_runs_list_and_session_page(
    transcripts: dict[str, Path], tmp_path: Path, capsys
) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text("[models]\nfake = { input = 2.5, output = 10.0 }\n")
    path = transcripts["entities"]
    capsys.readouterr()
    assert main(["report", str(path), "--prices", str(prices)]) == 0
    text = capsys.readouterr().out
    assert main(["report", str(path), "--prices", str(prices), "--json"]) == 0
    usd = json.loads(capsys.readouterr().out)["total_usage"]["cost_usd"]
    shown = f"${usd:.4f}"
    assert usd > 0 and f"cost: {shown}" in text
    client = client_for(transcripts)
    row = client.get("/").text.split('href="/run/entities.jsonl"')[1].split("</tr>")[0]
    assert shown in row
    page = only_session(client, "entities.jsonl")
    assert f'<b class="cost-value">{shown}</b>' in page
    free = client.get("/").text.split('href="/run/dcr.jsonl"')[1].split("</tr>")[0]
    assert "$0.0000" in free  # scripted models cost nothing, shown as $0, not as unknown


def test_a_call_given_up_on_shows_the_retries_it_took(tmp_path: Path, capsys) -> None:
    from tests.fake_openai import FakeOpenAIServer

    out = tmp_path / "t.jsonl"
    examiner = tmp_path / "examiner.yaml"
    examiner.write_text('default: "The claim is correct."\n')
    with FakeOpenAIServer(lambda messages: "never", fail_first=10_000) as server:
        code = main([
            "examine", "--question", "Where is it?", "--out", str(out), "--max-retries", "2", "--no-progress",
            "--model", f"examinee=openai-compatible:fake@{server.url}", "--model", f"examiner=scripted:{examiner}",
        ])  # fmt: skip
    assert code == 3
    capsys.readouterr()
    assert main(["show", str(out)]) == 0
    assert "(examinee's call, retried 2×)" in capsys.readouterr().out
    client = TestClient(create_app(Library([tmp_path]), prices=PRICES), base_url="http://127.0.0.1")
    page = only_session(client, "t.jsonl")
    row = page.split('<span class="role c33">examinee</span>')[1].split("</tr>")[0]
    assert re.findall(r'<td class="num">([^<]*)', row)[-2].strip() == "2" and "(1 failed)" in row
    assert "(examinee's model call, retried 2×)" in page
