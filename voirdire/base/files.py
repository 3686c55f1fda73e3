"""Reading a user's text file (a config, a price table, a script) so every problem is one line naming the file,
and the line where there is one; the user's cache folder."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

Fail = Callable[[str], Exception]
"""Builds the error a caller raises, from its one-line message."""


def user_cache() -> Path:
    """Where voirdire keeps what it can always make again (indexes, compiled templates): ``$XDG_CACHE_HOME/voirdire``,
    else ``~/.cache/voirdire``."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "voirdire"


def read_text(path: Path, what: str, fail: Fail) -> str:
    """``path`` as UTF-8 text; ``what`` names the kind of file in the messages (``config``, ``script``)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise fail(f"{path}: {what} file not found") from None
    except IsADirectoryError:
        raise fail(f"{path}: is a folder, not a {what} file") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise fail(f"{path}:{line}: not UTF-8 text (byte 0x{raw[exc.start]:02x}); save it as UTF-8") from None


def parse_toml(path: Path, text: str, fail: Fail) -> dict[str, Any]:
    """``text`` (read from ``path``) as TOML; tomllib's "(at line 2, column 5)" becomes ``path:2: ... (column 5)``."""
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        at = re.search(r" \(at line (\d+), column (\d+)\)$", str(exc))
        where, problem = (f":{at.group(1)}", f"{str(exc)[: at.start()]} (column {at.group(2)})") if at else ("", exc)
        raise fail(f"{path}{where}: invalid TOML: {problem}") from None
