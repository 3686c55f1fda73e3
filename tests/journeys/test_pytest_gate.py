"""Journey (e): a user's test examines two claims in one test with the pytest plugin's ``examine`` fixture,
records the calls against a fake OpenAI-compatible server, and replays them with the server gone and no key."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.fake_openai import FakeOpenAIServer

TEST_FILE = """\
from voirdire.integrations.pytest_plugin import assert_accepted, assert_verdict


def test_two_claims(examine):
    first = examine("The capital of Eritrea is Asmara.", max_followup_rounds=1)
    second = examine("Oslo is the capital of Norway.", max_followup_rounds=1)
    assert_accepted(first)
    assert_verdict(second, "correct")
    assert first.verdict.session_id != second.verdict.session_id
    assert "Asmara" in first.chat() and "Oslo" in second.chat()
"""


def respond(messages: list[dict[str, Any]]) -> str:
    last = str(messages[-1]["content"])
    for needle, reply in (
        ("Your goal is to try to verify", "1. Is that so?"),
        ("regarding your claim", "Yes."),
        ("follow-up questions?", "No"),
        ("correct or incorrect", "The claim is correct."),
    ):
        if needle in last:
            return reply
    return "I do not know."


def _pytest(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "VOIRDIRE_"))}
    env["HF_HUB_OFFLINE"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:phoenix", "test_gate.py", *args],
        cwd=folder, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_two_claims_in_one_test_record_and_replay_key_free(tmp_path: Path) -> None:
    (tmp_path / "test_gate.py").write_text(TEST_FILE, encoding="utf-8")
    recordings = tmp_path / "recordings"
    with FakeOpenAIServer(respond) as server:
        spec = f"openai-compatible:fake@{server.url}"
        (tmp_path / "pyproject.toml").write_text(f'[tool.voirdire.models]\n"*" = "{spec}"\n', encoding="utf-8")
        recorded = _pytest(tmp_path, "--voirdire-replay", str(recordings), "--voirdire-record")
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    replayed = _pytest(tmp_path, "--voirdire-replay", str(recordings))
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "1 passed" in replayed.stdout
