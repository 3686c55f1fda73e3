"""Bounds on what is read from outside: the numbers a server reports and the nesting of JSON a file holds.

Every reader at a boundary (a model client reading a reply, the transcript reader, the viewer's index) checks
against these, so a 400-digit token count or a line nested 5,000 deep is one clear error where it enters, never an
``OverflowError`` or a ``RecursionError`` somewhere downstream.
"""

from __future__ import annotations

import re

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
