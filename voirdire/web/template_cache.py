"""The viewer's compiled templates kept between processes, so a fresh viewer's first page does not compile the
templates an earlier one compiled (some 45 ms for a session page).

Jinja keys each entry by the template's name and a checksum of its source, so an edited or upgraded template is
compiled again. The folder (``voirdire.base.user_cache()`` / ``templates``) is made for this user alone, and used
only while it is this user's and nobody else can write to it: what is loaded from it is run as code. An entry that
cannot be read or written is compiled again, never an error.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import stat
from pathlib import Path

from jinja2 import FileSystemBytecodeCache
from jinja2.bccache import Bucket

from voirdire.base import user_cache


class TemplateCache(FileSystemBytecodeCache):
    """Jinja's file cache of compiled templates, quiet about a damaged entry or a folder it cannot write."""

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except (OSError, EOFError, ValueError, TypeError, pickle.UnpicklingError):
            bucket.reset()  # a damaged entry: the template is compiled again, and the entry written again

    def dump_bytecode(self, bucket: Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


def template_cache(folder: Path | None = None) -> TemplateCache | None:
    """The cache in ``folder`` (default: the user's cache folder), made if missing; None where it cannot be made or
    is not this user's alone."""
    folder = folder or user_cache() / "templates"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = folder.stat()
    except OSError:
        return None
    others = (hasattr(os, "getuid") and st.st_uid != os.getuid()) or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    if not stat.S_ISDIR(st.st_mode) or others:
        return None
    return TemplateCache(str(folder))
