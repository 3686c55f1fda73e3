"""The entailment evaluator bound by flag to an OpenAI-compatible endpoint (a fake server on 127.0.0.1)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fake_openai import FakeOpenAIServer
from tests.qa_entailment.qae_helpers import rule_based_evaluator
from voirdire.cli import main
from voirdire.protocols.qa_entailment.hierarchy import HierarchyCell
from voirdire.transcript import ModelCall, load

FIXTURE = Path(__file__).parent / "fixtures" / "NQ.json"


def test_qa_eval_against_an_openai_compatible_evaluator(tmp_path: Path, capsys) -> None:
    out = tmp_path / "t.jsonl"
    with FakeOpenAIServer(rule_based_evaluator) as server:
        code = main(
            [
                "qa-eval",
                *["--data", str(FIXTURE), "--evaluator", "entailment", "--system", "gpt4", "--partial-marks"],
                *["--model", f"evaluator=openai-compatible:fake-evaluator@{server.url}", "--max-tokens", "64"],
                *["--out", str(out), "--json", "--no-progress"],
            ]
        )
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["n_graded"] == 5 and report["errors"] == {}
    # Every call went over HTTP as a fresh one-message conversation, bounded by --max-tokens.
    assert len(server.requests) == report["replies"]["model_calls"] == 5 + 9 + 2 * 9
    assert all(r["model"] == "fake-evaluator" and r["max_tokens"] == 64 for r in server.requests)
    # The paper's other API settings (App. A.1) still apply: only max_tokens was set by the user.
    assert all(r["seed"] == 42 and r["temperature"] == 0.0 for r in server.requests)
    assert all(len(r["messages"]) == 1 and r["messages"][0]["role"] == "user" for r in server.requests)
    assert server.requests[0]["messages"][0]["content"].startswith("Convert a question answer pair")
    t = load(out)
    assert t.header is not None and t.header.roles["evaluator"].spec.startswith("openai-compatible:fake-evaluator@")
    calls = [c for s in t.sessions.values() for c in s.of_kind(ModelCall)]
    assert len(calls) == len(server.requests) and {c.model for c in calls} == {t.header.roles["evaluator"].spec}
    # GPT-4's answer names the whole gold "Wilhelm Conrad Röntgen" and more: system => gold only, A_sup − A_inf.
    # Its answer about amplitude modulation shares no word with "Olivia" / "MFSK": S − (A_sup ∪ A_inf).
    first = t.sessions["NQ-0-gpt4"].verdict
    assert first is not None
    assert first.statistics["gold_statements"] == [
        "The answer to 'who got the first nobel prize in physics' is: Wilhelm Conrad Röntgen"
    ]
    cells = {sid: s.verdict.statistics["cell"] for sid, s in t.sessions.items() if s.verdict}
    assert cells["NQ-0-gpt4"] == HierarchyCell.SUP_ONLY.value and cells["NQ-2-gpt4"] == HierarchyCell.NEITHER.value
    assert sum(report["systems"]["gpt4"]["hierarchy"].values()) == 5


def _requests(tmp_path: Path, capsys, *extra: str) -> list[dict]:
    with FakeOpenAIServer(rule_based_evaluator) as server:
        code = main(
            [
                "qa-eval",
                *["--data", str(FIXTURE), "--evaluator", "entailment", "--system", "gpt4", "--limit", "1"],
                *["--model", f"evaluator=openai-compatible:fake-evaluator@{server.url}"],
                *["--out", str(tmp_path / "t.jsonl"), "--fresh", "--json", "--no-progress", *extra],
            ]
        )
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    assert server.requests
    return server.requests


def test_qa_eval_sends_the_papers_api_settings_unless_told_otherwise(tmp_path: Path, capsys) -> None:
    # App. A.1: seed=42, temperature=0.0, max_tokens=300 for every call (not the core's 256 tokens and no seed).
    sent = {(r["max_tokens"], r["temperature"], r["seed"]) for r in _requests(tmp_path, capsys)}
    assert sent == {(300, 0.0, 42)}
    header = load(tmp_path / "t.jsonl").header
    assert header is not None
    binding = header.roles["evaluator"]
    assert (binding.max_tokens, binding.temperature, binding.seed) == (300, 0.0, 42)
    # Flags win, each on its own.
    sent = {(r["max_tokens"], r["temperature"], r["seed"]) for r in _requests(tmp_path, capsys, "--seed", "7")}
    assert sent == {(300, 0.0, 7)}
    # So does a --config table, key by key; what it leaves out still gets the paper's value.
    config = tmp_path / "run.toml"
    config.write_text("[roles.evaluator]\nmax_tokens = 128\ntemperature = 0.5\n", encoding="utf-8")
    sent = {
        (r["max_tokens"], r["temperature"], r["seed"]) for r in _requests(tmp_path, capsys, "--config", str(config))
    }
    assert sent == {(128, 0.5, 42)}
    # A [roles."*"] table binds the evaluator too when it has no table of its own; its 256 is the user's choice.
    config.write_text('[roles."*"]\nmax_tokens = 256\n', encoding="utf-8")
    sent = {
        (r["max_tokens"], r["temperature"], r["seed"]) for r in _requests(tmp_path, capsys, "--config", str(config))
    }
    assert sent == {(256, 0.0, 42)}
