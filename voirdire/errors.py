"""The root of every error a user can cause: bad data, model specs, prompts, transcripts, resume, CLI options.

``voirdire.cli.main`` catches ``VoirdireError`` once and prints its message on one line; anything else is a bug
and keeps its traceback. Each subclass also derives from the builtin it refines (usually ``ValueError``), so code
that caught the builtin keeps working.
"""

from __future__ import annotations


class VoirdireError(Exception):
    """An error the user can fix; its message names the file and line, or the option, that is wrong."""
