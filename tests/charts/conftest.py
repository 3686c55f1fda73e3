"""Real transcripts of every protocol for the chart, compare and reproduce tests, written by the ``voirdire``
command (or the Python API) with scripted models, rule agents or a fake OpenAI endpoint on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fake_openai import FakeOpenAIServer
from tests.protocols.dcr.helpers import AMC, ARTICLE, BAD, DCE, GOOD, RAI, S1, S2, S2_FIXED, SUMMARY, amc, dce, rai
from tests.protocols.oracle_checker.oracles import SENTENCE, linear, oracle
from tests.web import runs
from voirdire.cli import main


def dcr(folder: Path, scripts: Path) -> Path:
    """Two DCR pairs with a human score, one round of RAI: Ẑ 0.5 then 1.0 for the first, 1.0 for the second."""
    files = {
        "evaluator": {"rules": [{"match": DCE, "replies": [
            dce((S1, GOOD), (S2, BAD)), dce((S1, GOOD), (S2_FIXED, GOOD)), dce((S1, GOOD), (S2, GOOD))]}]},
        "converter": {"rules": [{"match": AMC, "replies": [amc(1, -1), amc(1, 1), amc(1, 1)]}]},
        "improver": {"rules": [{"match": RAI, "reply": rai((S1, S1), (S2, S2_FIXED))}]},
    }  # fmt: skip
    args = []
    for role, script in files.items():
        path = scripts / f"dcr-{role}.yaml"
        path.write_text(yaml.safe_dump(script))
        args += ["--model", f"{role}=scripted:{path}"]
    data = scripts / "pairs.jsonl"
    rows = [{"id": f"p{i}", "article": ARTICLE, "summary": SUMMARY, "score": float(i)} for i in range(2)]
    data.write_text("\n".join(json.dumps(r) for r in rows))
    out = folder / "dcr.jsonl"
    runs.run("dcr", "--data", str(data), *args, "--out", str(out), "--rounds", "1")
    return out


def entities(folder: Path) -> Path:
    """Two sentences through the linearity checker: a linear extractor (accepted) and a dropping one."""
    from voirdire.protocols.oracle_checker import check_entities

    out = folder / "entities.jsonl"
    check_entities(SENTENCE, clients={"oracle": oracle(linear)}, out=out, samples=2, tests=3)
    return out


def paraphrase(folder: Path) -> Path:
    def decide(messages: list[dict[str, Any]]) -> str:
        return json.dumps({"answer": "yes", "explanation": "same"})

    s1 = "The company said its quarterly profit rose sharply in the spring."
    s2 = "The company said on Monday that its quarterly profit rose sharply in the spring."
    out = folder / "paraphrase.jsonl"
    with FakeOpenAIServer(decide) as server:
        args = ["check-paraphrase", s1, s2, "--embedder", "bag-of-words", "--out", str(out)]
        assert main([*args, "--model", f"openai-compatible:fake@{server.url}", "--no-progress"]) == 0
    return out


@pytest.fixture(scope="session")
def scripts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scripts and data files the transcripts were written with (LMvLM's questions.jsonl, examinee.yaml ...)."""
    return tmp_path_factory.mktemp("chart-scripts")


@pytest.fixture(scope="session")
def transcripts(tmp_path_factory: pytest.TempPathFactory, scripts: Path) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("chart-transcripts")
    return {
        "cross_examination": runs.cross_examination(folder, scripts),
        "no_data": runs.no_data(folder),
        "qa_lexical": runs.qa_lexical(folder, scripts),
        "qa_entailment": runs.qa_entailment(folder, scripts),
        "dcr": dcr(folder, scripts),
        "oracle_entities": entities(folder),
        "oracle_paraphrase": paraphrase(folder),
    }
