"""The transcript lock is keyed on the file a path really names: a symbolic link to ``--out`` (or to its folder)
is the same transcript, so a second run through it is refused instead of writing every session twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.chaos.conftest import questions
from tests.chaos.protocol import replies
from tests.chaos.server import ChaosServer
from voirdire.cli import main
from voirdire.runner import ResumeError, _exclusive


def test_a_link_to_the_transcript_shares_its_lock(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    out.write_text("")
    link = tmp_path / "link.jsonl"
    link.symlink_to(out)
    (tmp_path / "dir_link").symlink_to(tmp_path, target_is_directory=True)
    dangling = tmp_path / "later.jsonl"
    dangling.symlink_to(tmp_path / "not_yet.jsonl")  # a link to a transcript not written yet
    with _exclusive(out):
        for other in (link, tmp_path / "dir_link" / "t.jsonl"):
            with pytest.raises(ResumeError, match="another run is writing this transcript"), _exclusive(other):
                pass
    with _exclusive(dangling), pytest.raises(ResumeError), _exclusive(tmp_path / "not_yet.jsonl"):
        pass
    assert not list(tmp_path.glob("*.lock"))  # every lock removed at the end


def test_a_run_through_a_link_while_another_runs_is_refused(
    chaos_cli: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, out = questions(tmp_path / "qs.jsonl", 2), tmp_path / "t.jsonl"
    link = tmp_path / "link.jsonl"
    link.symlink_to(out)
    with ChaosServer(replies) as server, _exclusive(out):  # a first run holds the transcript
        code = main(
            ["run", "chaos", "--data", str(data), "--out", str(link), "--no-progress",
             "--model", f"openai-compatible:m@{server.url}"]
        )  # fmt: skip
    assert code == 2 and "another run is writing this transcript" in capsys.readouterr().err
