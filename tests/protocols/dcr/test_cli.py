"""``voirdire dcr``: one pair printed as a chat with the score per round, a file of pairs with its report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from voirdire.cli import main
from voirdire.transcript import load

from .helpers import (
    AMC as AMC_PROMPT,
    ARTICLE,
    BAD,
    DCE,
    GOOD,
    RAI,
    S1,
    S2,
    S2_FIXED,
    SUMMARY,
    amc,
    dce,
    pairs_file,
    rai,
)


def scripts(tmp_path: Path) -> list[str]:
    files = {
        "evaluator": {
            "rules": [{"match": DCE, "replies": [dce((S1, GOOD), (S2, BAD)), dce((S1, GOOD), (S2_FIXED, GOOD))]}]
        },
        "converter": {"rules": [{"match": AMC_PROMPT, "replies": [amc(1, -1), amc(1, 1)]}]},
        "improver": {"rules": [{"match": RAI, "reply": rai((S1, S1), (S2, S2_FIXED))}]},
    }
    args = []
    for role, script in files.items():
        path = tmp_path / f"{role}.yaml"
        path.write_text(yaml.safe_dump(script))
        args += ["--model", f"{role}=scripted:{path}"]
    return args


def test_one_pair_prints_the_chat_the_scores_and_the_improved_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    article = tmp_path / "article.txt"
    article.write_text(ARTICLE)
    out = tmp_path / "t.jsonl"
    rc = main(["dcr", "--reference", str(article), "--candidate", SUMMARY, *scripts(tmp_path), "--out", str(out)])
    text = capsys.readouterr().out
    assert rc == 0
    assert "round 0: score 0.500" in text and "round 1: score 1.000" in text
    assert f"  -1 {S2}" in text and f"improved candidate: {S1} {S2_FIXED}" in text
    assert "evaluator" in text and "improver" in text  # the chat
    (s,) = load(out).sessions.values()
    assert s.item["reference"] == ARTICLE


def test_a_file_of_pairs_reports_and_correlates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = pairs_file(tmp_path)
    out = tmp_path / "t.jsonl"
    args = ["dcr", "--data", str(data), *scripts(tmp_path), "--out", str(out), "--no-progress", "--rounds", "0"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "scored 2, unscored 0" in text
    assert main(["report", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    # the script's second evaluation (both sentences consistent) serves the second pair
    assert report["scored"] == 2 and report["mean_initial_score"] == pytest.approx(0.75)
    assert report["correlation"]["kind"] == "binary" and report["correlation"]["auroc"] == 1.0


def test_input_errors_name_the_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dcr", "--reference", "R"]) == 2
    assert "--candidate" in capsys.readouterr().err
    assert main(["dcr", "--data", "summeval", "--reference", "R", "--candidate", "C"]) == 2
    assert "--data" in capsys.readouterr().err
    assert main(["dcr", "--reference", "R", "--candidate", "C", "--level", "paragraph", "--task", "semantic"]) == 2
    assert "Tables 11-12" in capsys.readouterr().err


@pytest.mark.parametrize("benchmark", ["summeval", "paws"])
def test_a_benchmark_against_a_fake_openai_endpoint(
    benchmark: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.fake_openai import FakeOpenAIServer
    from voirdire.protocols.dcr.data import DATA_ENV

    from .fake_dcr import respond

    monkeypatch.setenv(DATA_ENV, str(Path(__file__).parent / "fixtures"))
    out = tmp_path / "t.jsonl"
    with FakeOpenAIServer(respond) as server:
        args = ["dcr", "--data", benchmark, "--limit", "4", "--model", f"openai-compatible:fake@{server.url}"]
        rc = main([*args, "--out", str(out), "--no-progress", "--concurrency", "2", "--json"])
        formats = [r.get("response_format", {}).get("type") for r in server.requests]
    assert rc == 0
    result = json.loads(capsys.readouterr().out)
    assert result["report"]["scored"] == 4 and result["report"]["parse_failures"] == {}
    assert set(formats) == {"json_schema"}  # every reply asked through its schema
    sessions = load(out).sessions.values()
    assert all(s.verdict is not None and s.verdict.decision == "consistent" for s in sessions)


def test_python_api_checks_one_pair(tmp_path: Path) -> None:
    from voirdire.protocols.dcr import check

    from .helpers import agents

    clients = agents(
        evaluator=[dce((S1, GOOD), (S2, BAD)), dce((S1, GOOD), (S2_FIXED, GOOD))],
        converter=[amc(1, -1), amc(1, 1)],
        improver=rai((S1, S1), (S2, S2_FIXED)),
    )
    verdict = check(ARTICLE, SUMMARY, clients=clients, out=tmp_path / "t.jsonl", rounds=2)
    assert verdict.statistics["scores"] == [0.5, 1.0] and verdict.statistics["candidate"] == f"{S1} {S2_FIXED}"
