"""The report contract: ``report(transcript) -> Report`` for every protocol.

``Report`` holds what any transcript can say about its run (sessions, verdicts, errors, parse failures per role
and prompt); a protocol's report subclasses it with its paper's metrics and extends ``text``. ``voirdire report``
finds the protocol's report through the registry, so it works on any protocol's transcript.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from pydantic import BaseModel, Field

from voirdire.transcript import Message, ParseFailure, SessionRecord, Transcript


class Report(BaseModel):
    """What every protocol's report starts with."""

    protocol: str
    transcript: str | None = None
    sessions: int = 0
    verdicts: int = 0
    errors: int = 0
    parse_failures: dict[str, int] = Field(
        default_factory=dict, description="'role · prompt' -> parse failures recorded in finished and open sessions"
    )
    replies: dict[str, int] = Field(default_factory=dict, description="'role · prompt' -> replies received")

    def text(self) -> str:
        """The report as a person reads it."""
        return "\n".join(self.summary_lines())

    def summary_lines(self) -> list[str]:
        lines = [f"{self.protocol}: {self.sessions} sessions, {self.verdicts} verdicts, {self.errors} errors"]
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


def counts(sessions: Iterable[SessionRecord]) -> dict[str, object]:
    """The ``Report`` fields every protocol shares, for ``Report(**counts(...), ...)``."""
    sessions = list(sessions)
    failures: Counter[str] = Counter()
    replies: Counter[str] = Counter()
    for s in sessions:
        for e in s.events:
            if isinstance(e, ParseFailure):
                failures[f"{e.role} · {e.prompt or 'text'}"] += 1
            elif isinstance(e, Message) and e.receiver == "moderator":
                replies[f"{e.sender} · {e.prompt or 'text'}"] += 1
    return {
        "sessions": len(sessions),
        "verdicts": sum(s.verdict is not None for s in sessions),
        "errors": sum(s.verdict is None and bool(s.errors) for s in sessions),
        "parse_failures": dict(failures),
        "replies": dict(replies),
    }


def generic_report(transcript: Transcript) -> Report:
    """The shared part alone: for a protocol that registers no report of its own."""
    protocol = transcript.header.protocol if transcript.header else "unknown"
    return Report(protocol=protocol, transcript=transcript.path, **counts(transcript.sessions.values()))  # type: ignore[arg-type]
