"""docs/inspect.md's task runs as written, with Inspect's ``mockllm`` in place of every Inspect model it names, and
the voirdire commands it gives read the transcripts it leaves."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai")

import inspect_ai.model
from inspect_ai import eval

from tests.inspect_ai_scorers.test_scorers import mock_model
from voirdire.cli import main
from voirdire.transcript import load

PAGE = Path(__file__).resolve().parents[2] / "docs" / "inspect.md"


def test_the_page_s_task_scores_each_sample_and_leaves_its_transcript(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    task = next(b for b in blocks if b.startswith("# claims.py:"))  # the page's other task runs offline as written
    (tmp_path / "claims.py").write_text(task)
    real = inspect_ai.model.get_model
    named: list[Any] = []

    def get_model(model: Any = None, **kwargs: Any) -> Any:
        if isinstance(model, str):  # a model the page names: mockllm in its place
            named.append(model)
            return mock_model()
        return real(model, **kwargs)

    monkeypatch.setattr(inspect_ai.model, "get_model", get_model)
    monkeypatch.chdir(tmp_path)
    (log,) = eval("claims.py", model=mock_model(), log_dir="logs", display="none")
    assert log.status == "success" and named and set(named) == {"openai/gpt-4o-mini"}
    scores = {s.id: next(iter(s.scores.values())) for s in log.samples or []}  # type: ignore[union-attr]
    assert set(scores) == {"marriage", "eritrea"}
    (folder,) = Path("logs").glob("*.voirdire")
    for sid, score in scores.items():
        path = folder / f"{sid}_epoch1.jsonl"
        assert score.metadata["transcript"] == str(path) and len(load(path).sessions) == 1  # type: ignore[index]
        assert main(["show", str(path)]) == 0 and main(["report", str(path)]) == 0
    assert "mockllm" in capsys.readouterr().out.lower()
