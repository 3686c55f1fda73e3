"""The root of every error a user can cause: bad data, model specs, prompts, transcripts, resume, CLI options.

``voirdire.cli.main`` catches ``VoirdireError`` once and prints its message on one line; anything else is a bug
and keeps its traceback. Each subclass also derives from the builtin it refines (usually ``ValueError``), so code
that caught the builtin keeps working.
"""

from __future__ import annotations

import errno
import re


class VoirdireError(Exception):
    """An error the user can fix; its message names the file and line, or the option, that is wrong."""


class EndpointDown(VoirdireError):
    """An endpoint that refused every request so far and answered none: every further session would fail the same
    way, so the run stops at once (``run_stopping``) instead of retrying each one."""


def run_stopping(error: str) -> str | None:
    """Why the whole run must stop, when a session's one-line error (``ModelCallError: examiner via MODEL:
    EndpointDown: WHY (after 1 retries)``) is one every further session would meet; None for any other error."""
    mark = f": {EndpointDown.__name__}: "
    if mark not in error:
        return None
    who, _, why = error.partition(mark)
    who = who.partition(": ")[2] or who  # drop the outer exception's name
    why = re.sub(r" \(after \d+ retries\)$", "", why)  # which session retried first says nothing of the run
    return f"{who}: {why}"


class CannotWrite(VoirdireError, OSError):
    """A file voirdire writes could not be written (a full disk above all): one message naming the file, exit
    status ``exit_status``, nothing half-written left behind (reports go through a temporary file and a rename;
    the transcript keeps every complete line, so the same command resumes once there is space)."""

    exit_status = 5


def cannot_write(exc: OSError, path: object, what: str) -> CannotWrite:
    """The one error for a failed write of ``what`` (``--report``, ``transcript``, ``--cache``) at ``path``."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        why = "no space left on the device"
    else:
        why = f"cannot write it ({exc.strerror or exc})"
    error = CannotWrite(
        f"{what} {path}: {why}; nothing half-written was kept: fix that and run the same command again "
        "(finished sessions are in the transcript)"
    )
    error.errno = exc.errno
    return error


class SessionTimeout(VoirdireError, TimeoutError):
    """A session that ran past the run's per-session deadline (``session_timeout``): recorded as its error, the
    other sessions go on."""
