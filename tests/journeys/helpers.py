"""The command line as a user calls it, from a journey: its printed output, or its ``--json`` read back."""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

from voirdire.cli import main


def cli(*args: str) -> str:
    """``voirdire ARGS``: what it printed; a non-zero exit fails the journey with its output."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    assert code == 0, f"voirdire {' '.join(args)} exited {code}\n{out.getvalue()}\n{err.getvalue()}"
    return out.getvalue()


def cli_json(*args: str) -> Any:
    return json.loads(cli(*args))
