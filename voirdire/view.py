"""The terminal renderer of the chat model (``voirdire show``): one session as dialogue, dividers and verdict.

The turns come from ``voirdire.chat``, the same model the web viewer renders, so both show the same information:
who said what to whom, stage and round dividers, parse failures and retries, tokens and latency per reply and per
role, the verdict and its evidence. ``--prompts`` adds the prompts the protocol sent.
"""

from __future__ import annotations

import os
import sys
import textwrap
from typing import TextIO

from voirdire.chat import Bubble, Call, Chat, Divider, Failure, Note, Outcome, Problem, chat_of
from voirdire.errors import VoirdireError
from voirdire.transcript import DisplayHints, RunHeader, SessionRecord, Transcript


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


def call_text(call: Call) -> str:
    """``12+4 tokens · 0.31 s · 1 retry · cached``; a person's reply: ``typed in 8.20 s``"""
    if call.human:
        return f"typed in {call.latency_s:.2f} s"
    parts = [f"{call.prompt_tokens}+{call.completion_tokens} tokens", f"{call.latency_s:.2f} s"]
    if call.retries:
        parts.append(f"{call.retries} retr{'y' if call.retries == 1 else 'ies'}")
    if call.cached:
        parts.append("cached")
    if call.coalesced:
        parts.append("coalesced")
    return " · ".join(parts)


def _name(role: str) -> str:
    return role.capitalize()


def _bubble_lines(b: Bubble, chat: Chat, st: Style, prompts: bool) -> list[str]:
    colour = chat.colors.get(b.sender, "37")
    if b.kind == "prompt":
        if not prompts:
            return []
        return [
            st("2", f"{_name(b.sender)} → {_name(b.receiver)} [{b.prompt or 'text'}]:"),
            st("2", _indent(b.content)),
        ]
    if b.kind == "reply":
        who = _name(b.sender) + (" (human)" if b.human else "")
        head = st(colour, f"{who}:") + (st("2", "  " + call_text(b.call)) if b.call else "")
        return [head, _indent(b.text)]
    if b.kind == "memory":
        return [st(colour, f"{_name(b.sender)} (memory):"), _indent(b.text)]
    return [st(colour, f"{_name(b.sender)} → {_name(b.receiver)}:"), _indent(b.content if prompts else b.text)]


def render_chat(chat: Chat, *, prompts: bool = False, color: bool = False) -> str:
    st = Style(color)
    title = f"━━ session {chat.session_id}" + (f" · {chat.protocol}" if chat.protocol else "") + " ━━"
    lines = [st("1", title)]
    lines += [f"{key.replace('_', ' ')}: {value}" for key, value in chat.fields]
    if chat.gold:
        lines.append(st("2", "gold: " + " | ".join(chat.gold)))
    for turn in chat.turns:
        if isinstance(turn, Divider):
            if not turn.quiet:
                lane = f"{turn.lane} · " if turn.lane else ""
                undeclared = " (undeclared edge)" if not turn.declared else ""
                lines.append(st("2", f"── {lane}{turn.label}{undeclared} ──"))
        elif isinstance(turn, Bubble):
            lines += _bubble_lines(turn, chat, st, prompts)
        elif isinstance(turn, Failure):
            lines.append(st("31", f"!! {turn.role}: could not parse ({turn.error}); {turn.outcome}"))
        elif isinstance(turn, Note):
            data = ", ".join(f"{k}={v}" for k, v in turn.data.items())
            lines.append(st("2", f"· {turn.name}: {data}"))
        elif isinstance(turn, Problem):
            lines.append(st("31", f"ERROR {turn.error_type}: {turn.message}"))
        elif isinstance(turn, Outcome):
            verdict = f"Verdict: {turn.decision.upper()}" + (f" ({turn.trust})" if turn.trust else "")
            lines.append(st("1;32" if turn.accepted else "1;31", verdict))
            if turn.evidence:
                lines.append("evidence:")
                lines += [_indent(item) for item in turn.evidence]
            if turn.claim:
                lines.append("claim examined:")
                lines.append(_indent(turn.claim))
    lines.append(st("2", totals_text(chat)))
    return "\n".join(lines)


def totals_text(chat: Chat) -> str:
    """``5 model calls · examiner 3 calls, 300+20 tokens, 1.20 s · examinee ...``"""
    parts = [f"{chat.calls} model calls"]
    for t in chat.totals.values():
        human = " (human)" if t.human else ""
        parts.append(
            f"{t.role}{human} {t.calls} calls, {t.prompt_tokens}+{t.completion_tokens} tokens, {t.latency_s:.2f} s"
            + (f", {t.retries} retries" if t.retries else "")
        )
    return " · ".join(parts)


def render_session(
    s: SessionRecord,
    *,
    prompts: bool = False,
    color: bool = False,
    protocol: str = "",
    hints: DisplayHints | None = None,
    header: RunHeader | None = None,
) -> str:
    """One session as terminal text; ``header`` (or ``protocol`` and ``hints`` alone) says how to display it."""
    if header is None and (protocol or hints):
        header = RunHeader(run_id=s.run_id, protocol=protocol, display=hints or DisplayHints())
    return render_chat(chat_of(s, header), prompts=prompts, color=color)


def header_of(t: Transcript, run_id: str) -> RunHeader | None:
    """The header of the run that wrote a session (a resumed transcript holds several), else the last one."""
    return next((h for h in reversed(t.headers) if h.run_id == run_id), t.header)


def render(t: Transcript, *, session: str | None = None, prompts: bool = False, color: bool | None = None) -> str:
    color = use_color(sys.stdout) if color is None else color
    if session is not None:
        if session not in t.sessions:
            known = list(t.sessions)
            listed = ", ".join(known[:10]) + (f" and {len(known) - 10} more" if len(known) > 10 else "")
            raise SessionNotFound(f"{t.path}: no session {session!r} (sessions: {listed or 'none'})")
        chosen = [t.sessions[session]]
    else:
        chosen = list(t.sessions.values())
    return "\n\n".join(render_chat(chat_of(s, header_of(t, s.run_id)), prompts=prompts, color=color) for s in chosen)


def summary_line(s: SessionRecord) -> str:
    v = s.verdict
    status = "error" if v is None and s.errors else ("running" if v is None else v.decision)
    return f"{s.session_id}\t{status}\t{len(s.events)} events"
