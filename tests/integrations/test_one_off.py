"""A single claim examined from Python is a session of its own: its id from its text, a counter when the same
claim is examined again in the same transcript, the cached verdict only when asked for."""

from __future__ import annotations

from pathlib import Path

import voirdire
from tests.integrations.helpers import models
from voirdire.api import one_off_id
from voirdire.transcript import load


def test_each_call_appends_its_own_session_and_cached_reads_the_last(tmp_path: Path) -> None:
    out, roles = tmp_path / "claims.jsonl", models(tmp_path)
    first = voirdire.examine("Paris is the capital of Germany.", models=roles, out=out)
    other = voirdire.examine("Rome is in Spain.", models=roles, out=out)
    again = voirdire.examine("Paris is the capital of Germany.", models=roles, out=out)
    assert first.session_id.startswith("claim-") and again.session_id == f"{first.session_id}-2"
    assert len({first.session_id, other.session_id, again.session_id}) == 3
    assert list(load(out).sessions) == [first.session_id, other.session_id, again.session_id]
    cached = voirdire.examine("Paris is the capital of Germany.", models=roles, out=out, cached=True)
    assert cached.session_id == again.session_id and len(load(out).sessions) == 3  # nothing run
    assert one_off_id(out, first.session_id) == (f"{first.session_id}-3", [first.session_id, again.session_id])
    assert one_off_id(tmp_path / "none.jsonl", "claim-x") == ("claim-x", [])
    assert len(repr(first)) < 120 and "incorrect" in repr(first)
