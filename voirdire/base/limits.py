"""Bounds on what is read from outside: the numbers a server reports and the nesting of JSON a file holds.

Every reader at a boundary (a model client reading a reply, the transcript reader, the viewer's index) checks
against these, so a 400-digit token count or a line nested 5,000 deep is one clear error where it enters, never an
``OverflowError`` or a ``RecursionError`` somewhere downstream.
"""

from __future__ import annotations

import os
import re

from voirdire.base.errors import VoirdireError

TOKEN_COUNT_MAX = 10**9
"""The most tokens one call's usage may count: far above any context window, and small enough that a cost
computed from it cannot overflow (a 400-digit count from a server once ended a run and broke its reports)."""

MAX_JSON_DEPTH = 64
"""The deepest nesting of objects and lists a JSON line may have: voirdire writes a handful of levels, and a line
nested thousands deep (``{"a":`` x 5,000) exhausts the recursion of every reader."""

_JSON_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def token_count(value: object) -> int | None:
    """``value`` as a token count when it is a whole number from 0 to ``TOKEN_COUNT_MAX``; None otherwise (a bool,
    a float, a string, a negative or absurd number)."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= TOKEN_COUNT_MAX:
        return value
    return None


def too_deep(raw: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether the JSON text ``raw`` nests objects and lists deeper than ``limit`` (brackets inside strings do not
    count). Linear; the scan runs only when the text holds more opening brackets than ``limit``."""
    if raw.count(b"{") + raw.count(b"[") <= limit:
        return False
    depth = 0
    for token in _JSON_TOKENS.finditer(raw):
        first = token.group()[0]
        if first in b"{[":
            depth += 1
            if depth > limit:
                return True
        elif first in b"}]":
            depth -= 1
    return False


MAX_REPLY_CHARS_ENV = "VOIRDIRE_MAX_REPLY_CHARS"
DEFAULT_MAX_REPLY_CHARS = 100_000
"""The longest reply kept, in characters: some 25,000 tokens, a hundred times the default ``max_tokens`` (256), so
only a server that ignores ``max_tokens`` (or streams garbage) is ever cut. Set ``VOIRDIRE_MAX_REPLY_CHARS``."""
RAW_SHOWN_CHARS = 2_000
"""How much of an unparseable reply its parse-failure record repeats: the whole reply is in its model call."""


class LimitError(VoirdireError, ValueError):
    """A bound set in the environment that is not one; the message names the variable."""


_ENV_KEY: object = getattr(os.environ, "encodekey", str)(MAX_REPLY_CHARS_ENV)
_reply_chars: tuple[object, int] = (object(), DEFAULT_MAX_REPLY_CHARS)  # (the variable's raw value read, its number)


def max_reply_chars() -> int:
    """``VOIRDIRE_MAX_REPLY_CHARS``, else the default; anything but a whole number of at least 1000 is an error.

    Read at every model call (twice: the client's body cap, the agent's cut): the number is kept with the
    variable's raw value as the environment holds it (``os.environ``'s encoded mapping), and read again only when
    that is another object (set, changed or removed), without decoding the variable each time."""
    global _reply_chars
    data = getattr(os.environ, "_data", None)
    current = data.get(_ENV_KEY) if isinstance(data, dict) else _reply_chars
    if current is _reply_chars[0]:
        return _reply_chars[1]
    value = _read_max_reply_chars()
    if isinstance(data, dict):
        _reply_chars = (current, value)
    return value


def _read_max_reply_chars() -> int:
    raw = os.environ.get(MAX_REPLY_CHARS_ENV, "").strip()
    if not raw:
        return DEFAULT_MAX_REPLY_CHARS
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 12 and int(raw) >= 1000):
        raise LimitError(f"{MAX_REPLY_CHARS_ENV}={raw[:40]!r}: expected a whole number of characters, at least 1000")
    return int(raw)


def cut_reply(text: str, limit: int) -> tuple[str, int]:
    """``text`` cut to ``limit`` characters, with a note of the cut at its end; and how many characters were cut
    (0: none)."""
    if len(text) <= limit:
        return text, 0
    dropped = len(text) - limit
    note = f"\n[voirdire cut this reply: {dropped:,} more characters after the first {limit:,} ({MAX_REPLY_CHARS_ENV})]"
    return text[:limit] + note, dropped


def shortened(text: str, limit: int = RAW_SHOWN_CHARS) -> str:
    """``text`` with at most ``limit`` characters kept, the rest counted: a record that repeats a reply stored
    whole elsewhere."""
    if len(text) <= limit:
        return text
    return text[:limit] + f" [... {len(text) - limit:,} more characters, in the model call]"
