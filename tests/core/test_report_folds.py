"""``voirdire.registry.report_folds``: the one chooser of a run header's report fold that ``voirdire report``, the
certificate's reads and the MCP server's ``report`` tool share. A plain ``report(transcript)`` registration makes a
new fold each time it is asked; the chooser keeps one per protocol, so a resumed run (two headers) of such a
protocol is still read in one streamed pass, not reread whole."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from voirdire.integrations.mcp import McpConfig, run_report
from voirdire.registry import plugins, report_folds
from voirdire.reports import Report, as_fold, generic_report, stream as fold_module
from voirdire.transcript import RunHeader, Transcript

FIXTURE = Path(__file__).parent / "report_fixtures" / "cross_examination-errors.jsonl"
PLAIN = "plain_protocol"


class _PlainRegistration:
    """A third-party protocol written before folds: its report a plain function, its fold made anew each time."""

    def __init__(self) -> None:
        self.seen: list[int] = []

    def report(self, t: Transcript) -> Report:
        self.seen.append(len(t.sessions))
        return Report(protocol=PLAIN, sessions=len(t.sessions))

    @property
    def fold(self) -> Any:
        return as_fold(self.report)



def _installed(monkeypatch: pytest.MonkeyPatch, plain: _PlainRegistration) -> None:
    """``plain`` as the one protocol installed, the way a test installs its own registry (the entry points' is
    cached for the process: replacing what it reads would leak into later tests)."""
    monkeypatch.setattr(plugins, "registrations", lambda: {PLAIN: plain})


def _resumed(folder: Path) -> Path:
    """The fixture as a resumed run of the plain protocol: its header again after its sessions."""
    lines = FIXTURE.read_text().splitlines()
    header = json.loads(lines[0])
    assert header["kind"] == "header"
    header["protocol"] = PLAIN
    again = json.dumps(header)
    path = folder / "resumed.jsonl"
    path.write_text("\n".join([again, *lines[1:], again]) + "\n")
    return path


def test_one_fold_per_protocol_and_the_counts_for_one_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    plain = _PlainRegistration()
    assert plain.fold is not plain.fold  # what the chooser is for
    _installed(monkeypatch, plain)
    fold_for = report_folds()
    first = RunHeader.model_validate({"protocol": PLAIN, "run_id": "r1"})
    second = first.model_copy(update={"run_id": "r2"})
    assert fold_for(first) is fold_for(second)
    assert fold_for(RunHeader.model_validate({"protocol": "not_installed", "run_id": "r3"})) is generic_report
    assert fold_for(None) is generic_report
    assert report_folds()(first) is not fold_for(first)  # one chooser's cache, not the process's


def test_the_mcp_report_of_a_resumed_plain_run_reads_it_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    plain = _PlainRegistration()
    _installed(monkeypatch, plain)
    path = _resumed(tmp_path)
    parsed: list[object] = []
    iter_records = fold_module.iter_records
    monkeypatch.setattr(fold_module, "iter_records", lambda p: parsed.append(p) or iter_records(p))
    text = run_report(McpConfig(folders=[tmp_path], out=tmp_path / "out.jsonl"), path.name)
    assert len(parsed) == 1  # streamed: a chooser making a new fold for the second header reread the file whole
    sessions = sum(1 for line in path.read_text().splitlines() if json.loads(line)["kind"] == "session_start")
    assert plain.seen == [sessions] and f"{sessions} session" in text

