"""Render a session from its transcript as a chat in the terminal (``voirdire show``).

Everything protocol-specific (role colours, which item fields to show, gold fields, quiet states) comes from the
display hints in the run header, so any protocol's transcript renders without importing the protocol.
"""

from __future__ import annotations

import os
import sys
import textwrap
from typing import TextIO

from voirdire.errors import VoirdireError
from voirdire.transcript import (
    DisplayHints,
    ErrorEvent,
    Message,
    ModelCall,
    ParseFailure,
    SessionRecord,
    Step,
    Transcript,
    Transition,
    Verdict,
)


class SessionNotFound(VoirdireError, LookupError):
    """A session id the transcript does not hold."""


class Style:
    def __init__(self, enabled: bool):
        self.enabled = enabled

    def __call__(self, code: str, text: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.enabled else text


def use_color(stream: TextIO) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ


def _indent(text: str, width: int = 100) -> str:
    out = []
    for para in text.strip().splitlines() or [""]:
        out.extend(textwrap.wrap(para, width=width) or [""])
    return "\n".join("    " + line for line in out)


def _item_fields(s: SessionRecord, hints: DisplayHints) -> tuple[str, ...]:
    """The hinted fields, or (no hints: a transcript written before they existed) every short scalar field."""
    if hints.item_fields:
        return hints.item_fields
    return tuple(k for k, v in s.item.items() if k != "id" and isinstance(v, str | int | float) and len(str(v)) <= 300)


def render_session(
    s: SessionRecord,
    *,
    prompts: bool = False,
    color: bool = False,
    protocol: str = "",
    hints: DisplayHints | None = None,
) -> str:
    st = Style(color)
    hints = hints or DisplayHints()
    lines = [st("1", f"━━ session {s.session_id}" + (f" · {protocol}" if protocol else "") + " ━━")]
    for key in _item_fields(s, hints):
        if s.item.get(key) not in (None, "", []):
            lines.append(f"{key.replace('_', ' ')}: {s.item[key]}")
    for key in hints.gold_fields:
        value = s.item.get(key)
        if value not in (None, "", []):
            shown = value[:8] if isinstance(value, list) else [value]
            lines.append(st("2", "gold: " + " | ".join(map(str, shown))))
    calls = 0
    for e in s.events:
        if isinstance(e, Transition):
            label = e.to_state + (f" · round {e.turn}" if e.turn else "")
            if e.to_state not in hints.quiet_states:
                lines.append(st("2", f"── {label} ──"))
        elif isinstance(e, Message):
            name = e.sender.capitalize()
            colour = hints.colors.get(e.sender, "37")
            if e.sender in ("moderator", "system"):
                if prompts:
                    lines.append(st("2", f"{name} → {e.receiver.capitalize()} [{e.prompt or 'text'}]:"))
                    lines.append(st("2", _indent(e.content)))
            elif e.receiver == "moderator":
                lines.append(st(colour, f"{name}:"))
                lines.append(_indent(e.content))
            else:  # a role's words carried to another role inside a prompt
                shown = e.content if prompts or not e.quote else e.quote
                lines.append(st(colour, f"{name} → {e.receiver.capitalize()}:"))
                lines.append(_indent(shown))
        elif isinstance(e, ModelCall):
            calls += 1
        elif isinstance(e, ParseFailure):
            lines.append(st("31", f"!! {e.role}: could not parse ({e.error}); {e.outcome}"))
        elif isinstance(e, Step):
            data = ", ".join(f"{k}={v}" for k, v in e.data.items())
            lines.append(st("2", f"· {e.name}: {data}"))
        elif isinstance(e, ErrorEvent):
            lines.append(st("31", f"ERROR {e.error_type}: {e.message}"))
        elif isinstance(e, Verdict):
            verdict = e.decision.upper()
            trust = {True: "accepted", False: "rejected", None: ""}[e.accepted]
            lines.append(st("1;32" if e.accepted else "1;31", f"Verdict: {verdict}" + (f" ({trust})" if trust else "")))
            claim = e.statistics.get("claim")
            if claim and claim != s.item.get("claim"):
                lines.append("claim examined:")
                lines.append(_indent(str(claim)))
    lines.append(st("2", f"{calls} model calls"))
    return "\n".join(lines)


def render(t: Transcript, *, session: str | None = None, prompts: bool = False, color: bool | None = None) -> str:
    color = use_color(sys.stdout) if color is None else color
    protocol = t.header.protocol if t.header else ""
    hints = t.header.display if t.header else None
    if session is not None:
        if session not in t.sessions:
            known = list(t.sessions)
            listed = ", ".join(known[:10]) + (f" and {len(known) - 10} more" if len(known) > 10 else "")
            raise SessionNotFound(f"{t.path}: no session {session!r} (sessions: {listed or 'none'})")
        chosen = [t.sessions[session]]
    else:
        chosen = list(t.sessions.values())
    return "\n\n".join(render_session(s, prompts=prompts, color=color, protocol=protocol, hints=hints) for s in chosen)


def summary_line(s: SessionRecord) -> str:
    v = s.verdict
    status = "error" if v is None and s.errors else ("running" if v is None else v.decision)
    return f"{s.session_id}\t{status}\t{len(s.events)} events"
