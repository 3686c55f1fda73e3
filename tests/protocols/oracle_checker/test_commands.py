"""``voirdire check entities|paraphrase``: the two protocols under one command word (voirdire.commands group)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAIServer
from tests.protocols.oracle_checker.test_cli import SENTENCE, respond
from voirdire.cli import main


def test_check_entities_is_the_same_command_as_check_entities_dashed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    verdicts = []
    for words in (["check", "entities"], ["check-entities"]):
        with FakeOpenAIServer(respond) as server:
            out = tmp_path / f"{len(words)}.jsonl"
            args = [*words, SENTENCE, "--model", f"openai-compatible:fake@{server.url}", "--out", str(out)]
            assert main([*args, "--no-progress", "--json"]) == 0
        verdicts.append(json.loads(capsys.readouterr().out)["verdicts"])
    assert verdicts[0] == verdicts[1] and next(iter(verdicts[0].values()))["decision"] == "accepted"


def test_check_needs_a_word(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["check"])
    assert "entities|paraphrase" in capsys.readouterr().err
