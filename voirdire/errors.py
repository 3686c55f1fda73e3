"""The root of every error a user can cause: bad data, model specs, prompts, transcripts, resume, CLI options.

``voirdire.cli.main`` catches ``VoirdireError`` once and prints its message on one line; anything else is a bug
and keeps its traceback. Each subclass also derives from the builtin it refines (usually ``ValueError``), so code
that caught the builtin keeps working.
"""

from __future__ import annotations


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
    return f"{who}: {why}"
