"""The terminal renderer of the chat model (``voirdire show``): one session as dialogue, dividers and verdict.

The turns come from ``voirdire.chat``, the same model the web viewer renders, so both show the same information:
who said what to whom, stage and round dividers, parse failures and retries, tokens and latency per reply and per
role, structured steps as the protocol's display hints describe them (tables, word diffs), the verdict and its
evidence. ``--prompts`` adds the prompts the protocol sent and the raw replies a step card stands for.

Every text from the transcript passes through ``voirdire.base.text.shown`` (a reply cannot move the cursor, clear
the screen or reverse the line), and wrapping is linear in the text's length, so a reply of megabytes without a
space prints in about the time it takes to write it.
"""

from __future__ import annotations

import io
import os
import shutil
import sys
import warnings
from dataclasses import replace
from typing import TextIO

from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from voirdire.base import VoirdireError, shown
from voirdire.chat.turns import Bubble, Call, Chat, Divider, Failure, Note, Outcome, Problem, Turn, chat_of
from voirdire.transcript import Card, Cell, DisplayHints, RunHeader, SessionRecord, Transcript


class SessionNotFound(VoirdireError, LookupError):
    """A session id the transcript does not hold."""


class Style:
    def __init__(self, enabled: bool):
        self.enabled = enabled

    def __call__(self, code: str, text: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.enabled else text


def use_color(stream: TextIO) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ


WIDTH = 100  # columns of wrapped text at most
TABLE_WIDTH = 160  # columns of a step's table at most
MAX_LINE = 200  # no line of ours is longer
INDENT = 4  # a message's text is indented this much
NARROWEST = 40  # a terminal narrower than this is treated as this wide
WORD = 24  # a table column is never narrower than its longest word, up to this many columns


def columns() -> int | None:
    """The terminal's width (``COLUMNS``, else stdout's terminal), so text wraps there once and never again by the
    terminal; None when output goes to no terminal (a file, a pipe)."""
    if os.environ.get("COLUMNS", "").isdigit() or sys.stdout.isatty():
        return max(NARROWEST, shutil.get_terminal_size((WIDTH + INDENT, 24)).columns)
    return None


def text_width(lead: int = INDENT) -> int:
    """Columns of wrapped text after ``lead`` columns: the terminal's width less the lead, 100 at most."""
    cols = columns()
    return min(WIDTH, cols - lead) if cols else WIDTH


def wrap(paragraph: str, width: int = WIDTH) -> list[str]:
    """Greedy wrapping at spaces, a word longer than a line cut into pieces: linear in the paragraph's length."""
    lines: list[str] = []
    line = ""
    for word in paragraph.expandtabs(4).split(" "):
        if len(word) > width:
            if line:
                lines.append(line)
            pieces = [word[i : i + width] for i in range(0, len(word), width)]
            lines += pieces[:-1]
            line = pieces[-1]
        elif not line:
            line = word
        elif len(line) + 1 + len(word) <= width:
            line += " " + word
        else:
            lines.append(line)
            line = word
    lines.append(line)
    return [x.rstrip() for x in lines]


def _indent(text: str, width: int | None = None) -> str:
    width = width or text_width()
    out = []
    for para in shown(text).strip().splitlines() or [""]:
        out.extend(wrap(para, width))
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
    return shown(role.capitalize())


def _bubble_lines(b: Bubble, chat: Chat, st: Style, prompts: bool) -> list[str]:
    colour = chat.colors.get(b.sender, "37")
    if b.kind == "prompt":
        if not prompts:
            return []
        return [
            st("2", f"{_name(b.sender)} → {_name(b.receiver)} [{shown(b.prompt or 'text')}]:"),
            st("2", _indent(b.content)),
        ]
    if b.kind == "reply":
        return _reply_lines(b, colour, st, prompts)
    if b.kind == "memory":
        return [st(colour, f"{_name(b.sender)} (memory):"), _indent(b.text)]
    return [st(colour, f"{_name(b.sender)} → {_name(b.receiver)}:"), _indent(b.content if prompts else b.text)]


def _reply_lines(b: Bubble, colour: str, st: Style, prompts: bool) -> list[str]:
    """A reply: who, its call and what marks it (cut off, samples, folded into its step), then its text or its
    samples' groups, each with its parse failure."""
    who = _name(b.sender) + (" (human)" if b.human else "")
    parts = [(colour, f"{who}:")] + ([("2", "  " + call_text(b.call))] if b.call else [])
    if b.call is not None and b.call.cut_off:
        parts.append(("33", " · cut off at the token limit (finish_reason: length)"))
    if len(b.samples) > 1:
        parts.append(("2", f" · {b.sample_summary()}"))
    if b.folded and not prompts:
        parts.append(("2", " · structured reply, shown in its step (--prompts prints it)"))
        return [_parts_line(parts, st)]
    head = _parts_line(parts, st)
    if len(b.samples) <= 1:
        failure = b.samples[0].failure if b.samples else None
        return [head, _indent(b.text)] + ([_failure_line(failure, st, "    ")] if failure else [])
    lines = [head]
    for group in b.sample_groups():
        lines += [st("2", f"  ×{len(group.numbers)} ({group.label})"), _indent(group.text)]
        if group.failure is not None:
            lines.append(_failure_line(group.failure, st, "    "))
    return lines


def _parts_line(parts: list[tuple[str, str]], st: Style) -> str:
    """Styled parts of one line of ours; a part that would pass the terminal's edge starts a new, indented line
    (its leading `` · `` dropped)."""
    width = columns() or MAX_LINE
    out, used = "", 0
    for code, text in parts:
        if used and used + len(text) > width:
            pieces = wrap(text.removeprefix(" · ").lstrip(), width - 4)
            out += "\n" + "\n".join(st(code, "    " + p) for p in pieces)
            used = 4 + len(pieces[-1])
            continue
        out += st(code, text)
        used += len(text)
    return out


def _wrapped(text: str, width: int | None = None, lead: str = "") -> str:
    """One line of ours around transcript text, wrapped at the terminal (first line flush, the rest indented)."""
    width = width or text_width(len(lead) + INDENT)
    lines = wrap(shown(text), width)
    return "\n".join([lead + lines[0], *(lead + "    " + x for x in lines[1:])])


def _failure_line(f: Failure, st: Style, lead: str = "") -> str:
    """``!! examiner: expected a tool call ('correct' or 'incorrect'), got plain text (…); the outcome``"""
    return st("31", _wrapped(f"!! {shown(f.role)}: could not parse ({f.summary}); {f.outcome}", lead=lead))


def heading(chat: Chat, color: bool = False) -> str:
    """The session's title, item fields and gold answers."""
    st = Style(color)
    title = f"━━ session {shown(chat.session_id)}" + (f" · {shown(chat.protocol)}" if chat.protocol else "") + " ━━"
    lines = [st("1", title)]
    lines += [_wrapped(f"{key.replace('_', ' ')}: {value}") for key, value in chat.fields]
    if chat.gold:
        lines.append(st("2", _wrapped("gold: " + " | ".join(chat.gold))))
    return "\n".join(lines)


def turn_lines(turn: Turn, chat: Chat, *, prompts: bool = False, color: bool = False) -> list[str]:
    """One turn as lines (none for a quiet divider or a prompt left out)."""
    st = Style(color)
    if isinstance(turn, Divider):
        if turn.quiet:
            return []
        lane = f"{turn.lane} · " if turn.lane else ""
        undeclared = " (undeclared edge)" if not turn.declared else ""
        return [st("2", f"── {shown(lane + turn.label)}{undeclared} ──")]
    if isinstance(turn, Bubble):
        return _bubble_lines(turn, chat, st, prompts)
    if isinstance(turn, Failure):
        return [_failure_line(turn, st)]
    if isinstance(turn, Note):
        return [card_text(turn.card, color=color)]
    if isinstance(turn, Problem):
        tried = f" ({turn.role}'s call, retried {turn.retries}×)" if turn.role is not None else ""
        return [st("31", _wrapped(f"ERROR {turn.error_type}{tried}: {turn.message}"))]
    return outcome_lines(turn, color=color)


def outcome_lines(turn: Outcome, *, color: bool = False) -> list[str]:
    st = Style(color)
    verdict = f"Verdict: {shown(turn.decision).upper()}" + (f" ({turn.trust})" if turn.trust else "")
    lines = [st("1;32" if turn.accepted else "1;31", verdict)]
    if turn.correct is not None:  # the viewer's "right vs gold" badge, in words
        lines.append(st("32" if turn.correct else "31", "right vs gold" if turn.correct else "wrong vs gold"))
    if turn.card is not None:
        lines.append(card_text(turn.card, color=color))
    if turn.guarantee is not None:  # what the paper guarantees of this verdict (its margin, bound or coverage)
        g = turn.guarantee
        lines.append(st("36", "guarantee:"))
        lines.append(_indent(g.statement + (f" [{g.source}]" if g.source else "")))
    if turn.evidence:
        lines.append("evidence:")
        lines += [_indent(item) for item in turn.evidence]
    if turn.subject:
        lines.append(f"{shown(turn.subject[0])}:")
        lines.append(_indent(turn.subject[1]))
    return lines


def render_chat(chat: Chat, *, prompts: bool = False, color: bool = False) -> str:
    lines = [heading(chat, color)]
    for turn in chat.turns:
        lines += turn_lines(turn, chat, prompts=prompts, color=color)
    lines.append(Style(color)("2", _wrapped(totals_text(chat), text_width(INDENT) if columns() else MAX_LINE)))
    return "\n".join(lines)


_TONES = {"good": "green", "bad": "red", "muted": "dim", "": ""}


def _text(c: Cell) -> Text:
    return Text(shown(c.text), style=_TONES[c.tone])


def _longest_word(cells: list[Cell]) -> int:
    return max((len(w) for c in cells for w in shown(c.text).split()), default=1)


def card_text(card: Card, *, color: bool = False, width: int | None = None) -> str:
    """A step card: its title and fields on one line, its table, its word diff (``[-deleted-]{+inserted+}``
    without colour). The table fits the terminal: a column is at least as wide as its longest word (up to 24
    columns), so words wrap at spaces instead of breaking."""
    width = width or min(TABLE_WIDTH, columns() or TABLE_WIDTH)
    out = io.StringIO()
    console = Console(
        file=out, width=width, force_terminal=color, no_color=not color, color_system="standard" if color else None,
        highlight=False, markup=False, emoji=False, soft_wrap=False,
    )  # fmt: skip
    # Text.assemble keeps each part's own style (adding Texts would spread the first one's style over the rest)
    head = Text.assemble(("· ", "dim"), (shown(card.title), "bold"))
    fields = [Text.assemble((shown(label) + " ", "dim"), _text(c)) for label, c in card.fields]
    line = head  # the fields after the title, as many to a line as fit; a longer field wraps under its label
    for f in fields:
        if line.cell_len + 3 + f.cell_len <= width:
            line = Text(" · ").join([line, f])
        else:
            console.print(line)
            line = Text("  ") + f
    console.print(line)
    if card.headers:
        table = Table(box=None, padding=(0, 1), show_edge=False, pad_edge=False, header_style="dim")
        for i, h in enumerate(card.headers):
            cells = [row[i] for row in card.rows if i < len(row)]
            words = min(WORD, max(_longest_word(cells), max((len(w) for w in shown(h).split()), default=1)))
            table.add_column(shown(h), overflow="fold", min_width=words)
        for row in card.rows:
            table.add_row(*(_text(c) for c in row))
        console.print(Padding(table, (0, 0, 0, 2)) if card.rows else Text("  (none)", style="dim"))
    if card.diff is not None:
        diff = Text()
        for ch in card.diff:
            if ch.op == "=":
                diff += Text(shown(ch.text) + " ")
            elif color:
                diff.append(shown(ch.text), style="red strike" if ch.op == "-" else "green")
                diff.append(" ")
            else:
                diff += Text(("[-{}-]" if ch.op == "-" else "{{+{}+}}").format(shown(ch.text)) + " ")
        console.print(Padding(diff, (0, 0, 0, 2)))
    return "\n".join(line.rstrip() for line in out.getvalue().rstrip("\n").splitlines())


def _counted(n: int, word: str, many: str = "") -> str:
    """``1 call``, ``3 calls``."""
    return f"{n} {word if n == 1 else many or word + 's'}"


def totals_text(chat: Chat) -> str:
    """``5 model calls · examiner 3 calls, 300+20 tokens, 1.20 s · examinee ...``"""
    parts = [_counted(chat.calls, "model call")]
    for t in chat.totals.values():
        human = " (human)" if t.human else ""
        tokens = f"{t.prompt_tokens}+{t.completion_tokens} tokens"
        retries = f", {_counted(t.retries, 'retry', 'retries')}" if t.retries else ""
        retries += f", {t.failed} failed" if t.failed else ""
        parts.append(f"{shown(t.role)}{human} {_counted(t.calls, 'call')}, {tokens}, {t.latency_s:.2f} s{retries}")
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


def render(
    t: Transcript, *, session: str | None = None, prompts: bool = False, color: bool | None = None, gold: bool = True
) -> str:
    """Sessions as chats; ``gold=False`` leaves out right/wrong against gold (a review must not lead to it)."""
    color = use_color(sys.stdout) if color is None else color
    if session is not None:
        if session not in t.sessions:
            known = list(t.sessions)
            listed = ", ".join(known[:10]) + (f" and {len(known) - 10} more" if len(known) > 10 else "")
            raise SessionNotFound(f"{t.path}: no session {session!r} (sessions: {listed or 'none'})")
        chosen = [t.sessions[session]]
    else:
        chosen = list(t.sessions.values())
    chats = [chat_of(s, header_of(t, s.run_id)) for s in chosen]
    if not gold:
        chats = [replace(c, turns=[replace(x, correct=None) if isinstance(x, Outcome) else x for x in c.turns])
                 for c in chats]  # fmt: skip
    elif any(c.verdict is not None and c.verdict.correct is None for c in chats):
        chats = with_report_gold(t, chats)
    return "\n\n".join(render_chat(c, prompts=prompts, color=color) for c in chats)


def with_report_gold(t: Transcript, chats: list[Chat]) -> list[Chat]:
    """Chats whose verdict states no gold, with right/wrong against the gold of the protocol's report rows (``id``,
    ``gold``: LMvLM's alias match), as the viewer's badge reads it; unchanged where the report knows none."""
    from voirdire.reports import agrees_with_gold, gold_labels

    try:
        from voirdire.registry import registrations

        reg = registrations().get(t.header.protocol) if t.header is not None else None
        if reg is None:
            return chats
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            labels = gold_labels(getattr(reg.fold(t, ci=0), "rows", None))  # the rows only: no intervals
    except Exception:  # a report that cannot read this transcript knows no gold here; the chat still shows
        return chats
    out = []
    for c in chats:
        v = c.verdict
        if v is not None and v.correct is None and c.item_id is not None and c.item_id in labels:
            right = agrees_with_gold({}, accepted=v.accepted, label=labels[c.item_id])
            c = replace(c, turns=[replace(x, correct=right) if x is v else x for x in c.turns])
        out.append(c)
    return out


def summary_line(s: SessionRecord) -> str:
    v = s.verdict
    status = "error" if v is None and s.errors else ("running" if v is None else v.decision)
    return shown(f"{s.session_id}\t{status}\t{len(s.events)} events")
