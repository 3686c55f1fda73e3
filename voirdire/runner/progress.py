"""A run's progress where no terminal shows it: a plain line every ``EVERY_S`` seconds and one at the end, so a
redirected log (CI, ``nohup``, ``2> run.log``) gets a few readable lines instead of a bar's carriage returns."""

from __future__ import annotations

import sys
import time
from typing import IO, Any

EVERY_S = 30.0  # seconds between two progress lines in a log


class PlainProgress:
    """What the runner's tally calls on a progress bar (``update``, ``refresh``, ``set_postfix_str``, ``close``),
    written as whole lines: ``DESC: N/TOTAL sessions [POSTFIX]``."""

    def __init__(self, total: int, desc: str, *, file: IO[str] | None = None, every_s: float = EVERY_S) -> None:
        self.total, self.desc, self.n, self.postfix = total, desc, 0, ""
        self.file = file if file is not None else sys.stderr
        self.every_s = every_s
        self._last = time.monotonic()
        self._said = -1

    def update(self, n: int = 1) -> None:
        self.n += n
        if time.monotonic() - self._last >= self.every_s:
            self._line()

    def refresh(self) -> None:
        """Nothing between lines: a log gets a line every ``every_s`` seconds, not one per event."""

    def set_postfix_str(self, text: str, refresh: bool = True) -> None:
        self.postfix = text

    def close(self) -> None:
        if self._said != self.n:
            self._line()

    def _line(self) -> None:
        more = f" [{self.postfix}]" if self.postfix else ""
        print(f"{self.desc}: {self.n}/{self.total} sessions{more}", file=self.file, flush=True)
        self._last, self._said = time.monotonic(), self.n


def progress(total: int, desc: str, file: Any = None) -> Any:
    """tqdm's bar on a terminal or in a notebook (a widget there); ``PlainProgress`` lines anywhere else."""
    stream = file if file is not None else sys.stderr
    if not _in_notebook() and not (hasattr(stream, "isatty") and stream.isatty()):
        return PlainProgress(total, desc, file=stream)
    from tqdm.auto import tqdm  # a widget in a Jupyter notebook, the text bar on a terminal

    return tqdm(total=total, desc=desc, unit="session", file=stream, dynamic_ncols=True)


def _in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel (IPython's kernel shell), where tqdm draws a widget."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None  # type: ignore[attr-defined]
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"
