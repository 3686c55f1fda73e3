"""A notebook run under a real kernel (nbclient, ipykernel): a synchronous ``voirdire.examine(...)`` in a cell (a
running event loop) waits for its run instead of raising, a run shows a progress bar, and a session, a run and a
report display as HTML holding the chat, with no script."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.integrations.helpers import models

WHY = "the notebook extra is not installed (pip install 'voirdire[notebook]')"
nbformat = pytest.importorskip("nbformat", reason=WHY)
nbclient = pytest.importorskip("nbclient", reason=WHY)
pytest.importorskip("ipykernel", reason=WHY)

CELLS = [
    "import asyncio, voirdire\nmodels = {models!r}\nasyncio.get_running_loop() is not None",
    "verdict = voirdire.examine('Paris is the capital of Germany.', models=models, out={one!r})\nverdict.decision",
    "voirdire.load({one!r}).sessions[verdict.session_id]",
    "result = voirdire.run('cross_examination', [{{'id': 'a', 'claim': 'Rome is in Spain.'}}, "
    "{{'id': 'b', 'claim': 'Oslo is in Peru.'}}], models=models, out={two!r})\nresult",
    "from voirdire.registry import get\nget('cross_examination').report(voirdire.load({two!r}))",
    "voirdire.load({two!r}).sessions_frame()[['session_id', 'decision']].to_dict('records')",
]


def _outputs(cell: Any, kind: str) -> list[str]:
    found = []
    for output in cell.outputs:
        data = output.get("data", {})
        if kind in data:
            found.append(data[kind] if isinstance(data[kind], str) else json.dumps(data[kind]))
        elif kind == "stream" and output.get("output_type") == "stream":
            found.append(output["text"])
    return found


def test_a_notebook_runs_sync_calls_and_shows_chats(tmp_path: Path) -> None:
    context = {"models": models(tmp_path), "one": str(tmp_path / "one.jsonl"), "two": str(tmp_path / "two.jsonl")}
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c.format(**context)) for c in CELLS])
    where = {"metadata": {"path": str(tmp_path)}}  # the kernel's working folder
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources=where)
    client.execute()  # a cell that raises fails here, naming the cell and the error
    loop, examine, session, run, report, frame = nb.cells
    assert _outputs(loop, "text/plain") == ["True"]  # the cells do run inside an event loop
    assert _outputs(examine, "text/plain") == ["'incorrect'"]
    (html,) = _outputs(session, "text/html")
    assert "It is in France." in html and "Paris is the capital of Germany." in html and "incorrect" in html
    (html,) = _outputs(run, "text/html")
    assert "Rome is in Spain." in html and "Oslo is in Peru." in html and "cross_examination" in html
    assert _outputs(run, "application/vnd.jupyter.widget-view+json")  # tqdm.auto's bar, a widget in a notebook
    (html,) = _outputs(report, "text/html")
    assert "<pre class=\"report\">" in html and "2 " in html
    assert "'decision': 'incorrect'" in _outputs(frame, "text/plain")[0]
    for cell in (session, run, report):
        assert "<script" not in "".join(_outputs(cell, "text/html")).lower()
