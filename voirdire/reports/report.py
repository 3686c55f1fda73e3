"""``Report``: what every protocol's report starts with, and the ``Context`` a report's fold finishes in.

A protocol's report subclasses ``Report`` with its paper's metrics and extends ``text``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from voirdire.base import HtmlDisplay
from voirdire.reports.stability import Stability
from voirdire.reports.usage import Usage, usage_lines
from voirdire.transcript import RunHeader

DEFAULT_CI = 0.95  # the level of a report's intervals unless ``--ci`` says otherwise; ``--ci 0`` turns them off


def _n(n: int, word: str) -> str:
    """``1 session``, ``2 sessions`` (``voirdire.reports.plural``, which this module is below)."""
    return f"{n} {word}{'s' * (n != 1)}"


class Report(HtmlDisplay, BaseModel):
    """What every protocol's report starts with.

    ``intervals``: the protocol's numbers with their intervals (``voirdire.certificate.Interval``, which the
    protocol computes at the level ``Context.ci``), keyed by what the report prints them as; ``ci`` the level
    (None: intervals off) and ``ci_seed`` the seed of the bootstrap resampling, so that they can be recomputed.
    They are listed apart, after the protocol's own lines, so that the point numbers read as they always did."""

    protocol: str
    transcript: str | None = None
    sessions: int = 0
    verdicts: int = 0
    errors: int = 0
    parse_failures: dict[str, int] = Field(
        default_factory=dict, description="'role · prompt' -> parse failures recorded in finished and open sessions"
    )
    replies: dict[str, int] = Field(default_factory=dict, description="'role · prompt' -> replies received")
    usage: dict[str, Usage] = Field(default_factory=dict, description="role -> model calls, tokens and cost")
    total_usage: Usage | None = Field(None, description="every role's model calls, tokens and cost together")
    ci: float | None = Field(None, description="level of the intervals (0.95); None when they are off (--ci 0)")
    ci_seed: int | None = Field(None, description="seed of the bootstrap resampling the intervals used")
    intervals: dict[str, Any] = Field(
        default_factory=dict, description="what the report prints -> its interval (voirdire.certificate.Interval)"
    )
    stability: Stability | None = Field(
        None, description="a run with repeats: each item's verdicts over its repeats, the flip rate, undecided items"
    )

    def __repr__(self) -> str:
        """One short line (``text()`` is the report; a notebook shows it as HTML)."""
        n = self.sessions
        where = f" of {self.transcript!r}" if self.transcript else ""
        return f"{type(self).__name__}({self.protocol}{where}: {n} session{'s' * (n != 1)}, {self.verdicts} verdicts)"

    # Interval names shown as percentages (the report's tables print these numbers in %); others as 0.xxx.
    PERCENT_INTERVALS: ClassVar[frozenset[str]] = frozenset(
        {"accuracy", "precision", "recall", "F1", "claims correct", "success rate", "TPR", "TNR", "rate"}
    )

    def text(self) -> str:
        """The report as a person reads it."""
        return "\n".join([*self.summary_lines(), *self.interval_lines(), *self.usage_lines()])

    def interval_lines(self) -> list[str]:
        """'intervals (95%, bootstrap seed S):' and one line per number: its interval, or why it has none; then
        the stability section of a run with repeats (every protocol's text prints these lines)."""
        stable = self.stability.lines() if self.stability is not None else []
        if not self.intervals or self.ci is None:
            return stable
        seed = f", bootstrap seed {self.ci_seed}" if self.ci_seed is not None else ""
        width = max(len(key) for key in self.intervals)
        lines = [f"intervals ({100 * self.ci:g}%{seed}):"]
        for key, interval in self.intervals.items():
            lines.append(f"  {key:<{width}}  {interval.text(percent=interval.name in self.PERCENT_INTERVALS)}")
        return lines + stable

    def summary_lines(self) -> list[str]:
        lines = [
            f"{self.protocol}: {_n(self.sessions, 'session')}, {_n(self.verdicts, 'verdict')}, "
            f"{_n(self.errors, 'error')}"
        ]
        if self.parse_failures:
            lines.append("parse failures: " + self.parse_failure_rates())
        return lines

    def parse_failure_rates(self) -> str:
        """'role · prompt failed/replies (rate)' for every role and prompt with a failure."""
        parts = []
        for key, failed in sorted(self.parse_failures.items()):
            total = self.replies.get(key, 0)
            parts.append(f"{key} {failed}/{total} ({100 * failed / total:.0f}%)" if total else f"{key} {failed}")
        return ", ".join(parts)

    def usage_lines(self) -> list[str]:
        """Tokens and requests, then the cost in total and per role; nothing when no model was called."""
        return usage_lines(self.usage, self.total_usage)


@dataclass(frozen=True)
class Context:
    """What a fold's ``finish`` knows besides its sessions' values: the run headers and the counts every report
    shares (``Report(**ctx.counts, ...)``)."""

    headers: Sequence[RunHeader]
    counts: dict[str, Any]
    path: str | None = None
    ci: float = DEFAULT_CI  # the level of the report's intervals; 0: none (``voirdire report --ci 0``)

    @property
    def header(self) -> RunHeader | None:
        """The last run header, as ``Transcript.header``."""
        return self.headers[-1] if self.headers else None
