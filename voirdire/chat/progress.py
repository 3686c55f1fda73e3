"""A progress display for a long step that is not a run of sessions (a run has its own bar): a spinner, what is
being done and the time it has taken, on stderr and only at a terminal, so output that is piped or parsed stays
clean. Drawn by rich."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.text import Text

from voirdire.base import shown


@contextmanager
def stage(what: str, *, stream: TextIO | None = None) -> Iterator[None]:
    """``with stage("scoring 1,600 summaries with rougeL"):`` shows a spinner with ``what`` while the block runs."""
    console = Console(file=stream, stderr=stream is None, highlight=False)
    if not console.is_terminal:
        yield
        return
    columns = (SpinnerColumn(), TextColumn("{task.description}", markup=False), TimeElapsedColumn())
    start = time.monotonic()
    with Progress(*columns, console=console, transient=True) as progress:
        progress.add_task(shown(what), total=None)
        yield
    console.print(Text(f"✓ {shown(what)} ({time.monotonic() - start:.1f} s)", style="dim"))
