"""Output files written whole or not at all: a temporary file beside the target, then a rename.

A report, an export or a chart written in place and cut off by a full disk leaves a half-written (often 0-byte)
file that looks like a result. ``write_atomic`` writes to ``.NAME.PID.tmp`` in the same folder, flushes it to the
device and renames it over the target, which the file system does in one step; on any failure the temporary file
is removed and the target is left as it was. A full disk (any failed write) is ``voirdire.base.errors.CannotWrite``:
one line naming the file, exit status 5.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from voirdire.base.errors import cannot_write


def write_atomic(path: str | Path, data: str | bytes, what: str) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` whole, or leave ``path`` untouched; ``what`` names the file in
    an error (``--report``, ``export``)."""
    path = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise cannot_write(exc, path, what) from None
