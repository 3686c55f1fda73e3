"""The pytest plugin as a user runs it: docs/pytest.md's example file, recorded against a fake OpenAI-compatible
server, replayed with the server gone and no key, and failing with the chat when a recorded verdict changes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.fake_openai import FakeOpenAIServer

DOC = Path(__file__).resolve().parents[2] / "docs" / "pytest.md"


def respond(messages: list[dict[str, Any]]) -> str:
    last = str(messages[-1]["content"])
    for needle, reply in (
        ("Your goal is to try to verify", "1. Is Asmara the capital of Eritrea?"),
        ("regarding your claim", "Yes: Asmara has been the capital of Eritrea since 1993."),
        ("follow-up questions?", "No"),
        ("correct or incorrect", "The claim is correct."),
    ):
        if needle in last:
            return reply
    return "I do not know."


def example() -> str:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 1, "docs/pytest.md holds one example test file"
    return blocks[0]


def pytest_run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "VOIRDIRE_"))}
    env["HF_HUB_OFFLINE"] = "1"
    return subprocess.run(
        # Phoenix's client plugin (installed beside voirdire here) would import all of Phoenix into each run
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:phoenix", "test_claims.py", *args],
        cwd=folder, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_the_example_records_replays_offline_and_fails_with_the_chat(tmp_path: Path) -> None:
    (tmp_path / "test_claims.py").write_text(example(), encoding="utf-8")
    recordings = tmp_path / "recordings"
    with FakeOpenAIServer(respond) as server:
        spec = f"openai-compatible:fake@{server.url}"
        (tmp_path / "pyproject.toml").write_text(f'[tool.voirdire.models]\n"*" = "{spec}"\n', encoding="utf-8")
        recorded = pytest_run(tmp_path, "--voirdire-replay", str(recordings), "--voirdire-record")
        asked = len(server.requests)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert asked > 0 and (recordings / "recordings.jsonl").is_file()

    # the server is gone and there is no key: every call is answered from the recordings
    replayed = pytest_run(tmp_path, "--voirdire-replay", str(recordings))
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "2 passed" in replayed.stdout

    # the recorded examiner now calls the claim incorrect: the gate fails and shows the examination
    file = recordings / "recordings.jsonl"
    file.write_text(file.read_text(encoding="utf-8").replace("The claim is correct.", "The claim is incorrect."))
    changed = pytest_run(tmp_path, "--voirdire-replay", str(recordings))
    assert changed.returncode == 1 and "2 failed" in changed.stdout
    assert "expected the verdict 'correct', got 'incorrect'" in changed.stdout
    assert "Is Asmara the capital of Eritrea?" in changed.stdout  # the chat, not just the decision


def test_a_call_with_no_recording_fails_naming_it_and_sends_nothing(tmp_path: Path) -> None:
    (tmp_path / "test_claims.py").write_text(example(), encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.voirdire.models]\n"*" = "openai-compatible:fake@http://127.0.0.1:9/v1"\n', encoding="utf-8"
    )  # port 9 (discard): a request sent would fail differently
    empty = tmp_path / "recordings"
    empty.mkdir()
    out = pytest_run(tmp_path, "--voirdire-replay", str(empty))
    assert out.returncode == 1
    assert "no recording for a call to openai-compatible:fake@http://127.0.0.1:9/v1" in out.stdout
    assert "record it with --voirdire-record" in out.stdout


def test_record_without_a_folder_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "test_claims.py").write_text(example(), encoding="utf-8")
    out = pytest_run(tmp_path, "--voirdire-record")
    assert out.returncode == 4 and "--voirdire-record: name the folder to record into" in out.stderr
