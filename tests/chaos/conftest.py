"""The chaos suite: a misbehaving OpenAI-compatible server on 127.0.0.1 (``server.py``) against the runner, the
agents' retry policy and the command line, with the suite's own protocol registered for the test only."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.chaos.protocol import registration


@pytest.fixture
def chaos_cli(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``voirdire run chaos`` exists (and only it: the suite does not depend on the other protocols' state)."""
    from voirdire import registry
    from voirdire.registry import plugins

    regs = {"chaos": registration}
    for module in (registry, plugins):  # the face and the module whose get() reads them
        monkeypatch.setattr(module, "registrations", lambda: regs)
        monkeypatch.setattr(module, "command_plugins", lambda: ())  # the protocol packages' own commands
    yield


def questions(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps({"id": f"q{i:03d}", "question": f"Capital {i}?"}) + "\n" for i in range(n)))
    return path
