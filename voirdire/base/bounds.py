"""Upper bounds on the numbers a run is given (command-line options, ``RunOptions``, a run config's role tables).

Each is checked before anything runs and its error says the bound and why: a few zeros too many
(``--repeats 1000000000``) is one clear error, not a run that prints nothing while it allocates for ever.
"""

from __future__ import annotations

import math

MAX_REPEATS = 1_000
"""Sessions per item: a verdict's flip rate is read well within a few dozen repeats; a thousand is ample."""
MAX_CONCURRENCY = 4_096
"""Sessions at a time in one process: sixteen times an endpoint's connections (256), far past what one event loop
keeps busy."""
MAX_WORKERS = 256
"""Worker processes (or Ray actors) of a run: each is a whole Python process with the roles' models."""
MAX_TOKENS = 1_000_000
"""Tokens one reply may have: above every model's context window."""
MAX_TIMEOUT_S = 86_400.0
"""Seconds a request or a session may take: a day. A deadline must be a finite number: ``inf`` is not one."""


def count_problem(value: int, low: int, high: int, unit: str) -> str | None:
    """What is wrong with a whole number of ``unit`` that must lie in [low, high] (said after the option's name),
    None when nothing is."""
    if value < low:
        return f"must be at least {low:,} ({unit}), got {value:,}"
    if value > high:
        return f"must be at most {high:,} ({unit}), got {value:,}"
    return None


def seconds_problem(value: float) -> str | None:
    """What is wrong with a deadline in seconds (said after the option's name), None when nothing is."""
    if math.isnan(value) or math.isinf(value):
        return f"must be a finite number of seconds, got {value}"
    if value <= 0:
        return f"must be a positive number of seconds, got {value:g}"
    if value > MAX_TIMEOUT_S:
        return f"must be at most {MAX_TIMEOUT_S:,.0f} s (a day), got {value:g}"
    return None
