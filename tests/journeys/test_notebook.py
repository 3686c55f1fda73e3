"""Journey (c): a notebook kernel (nbclient, ipykernel) examines two claims with ``voirdire.examine`` into one
transcript and displays each verdict and then the run: the verdict as HTML (and a short text form), the run with
both sessions."""

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
    "import voirdire\nmodels = {models!r}",
    "first = voirdire.examine('Paris is the capital of Germany.', models=models, out={out!r})\nfirst",
    "second = voirdire.examine('Rome is in Spain.', models=models, out={out!r})\nsecond",
    "again = voirdire.examine('Paris is the capital of Germany.', models=models, out={out!r})\n"
    "(again.session_id != first.session_id, repr(again))",
    "voirdire.load({out!r})",
]


def _outputs(cell: Any, kind: str) -> list[str]:
    return [o["data"][kind] if isinstance(o["data"][kind], str) else json.dumps(o["data"][kind])
            for o in cell.outputs if kind in o.get("data", {})]  # fmt: skip


def test_a_notebook_examines_claims_and_shows_verdicts_and_the_run(tmp_path: Path) -> None:
    context = {"models": models(tmp_path), "out": str(tmp_path / "claims.jsonl")}
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c.format(**context)) for c in CELLS])
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})  # fmt: skip
    client.execute()
    _, first, second, again, run = nb.cells
    for cell, claim in ((first, "Paris is the capital of Germany."), (second, "Rome is in Spain.")):
        (html,) = _outputs(cell, "text/html")
        assert "incorrect" in html and claim in html and "<script" not in html.lower()
        (text,) = _outputs(cell, "text/plain")
        assert len(text) < 200 and "incorrect" in text  # a short text form, not the whole event
    (text,) = _outputs(again, "text/plain")
    assert text.startswith("(True,") and "claim-" in text  # the same claim again is a session of its own
    (html,) = _outputs(run, "text/html")
    assert "Paris is the capital of Germany." in html and "Rome is in Spain." in html
    assert html.count("incorrect") >= 3
