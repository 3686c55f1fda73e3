"""An item id with terminal escape sequences (or bidi controls) is shown safely wherever a run prints it: the
grouped session errors on stderr included, not only the transcript views."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.chaos.conftest import chaos_cli  # noqa: F401  (a fixture)
from tests.chaos.protocol import replies
from tests.chaos.server import ChaosServer
from voirdire.cli import main

IDS = ["clear\x1b[2J\x1b[H", "title\x1b]0;pwned\x07", "bidi\u202eevil", "bell\x07"]


@pytest.mark.parametrize("failing", [1, len(IDS)], ids=["one-error", "grouped"])
def test_item_ids_with_escape_sequences_are_shown_safely_on_stderr(
    chaos_cli: None, tmp_path: Path, capsys: pytest.CaptureFixture[str], failing: int  # noqa: F811
) -> None:
    data, out = tmp_path / "qs.jsonl", tmp_path / "t.jsonl"
    data.write_text("".join(json.dumps({"id": i, "question": f"Capital {k}?"}) + "\n" for k, i in enumerate(IDS)))
    bad = {f"Capital {k}?" for k in range(failing)}

    def plan(index: int, body: dict[str, object]) -> str:
        return "400" if any(q in json.dumps(body) for q in bad) else "ok"

    with ChaosServer(replies, plan) as server:
        code = main(["run", "chaos", "--data", str(data), "--out", str(out), "--no-progress", "--max-retries", "0",
                     "--model", f"openai-compatible:m@{server.url}"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 3, err
    assert "error in" in err
    for raw in ("\x1b", "\x07", "\u202e"):
        assert raw not in err, repr(err)
