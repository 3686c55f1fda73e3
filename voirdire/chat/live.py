"""A run's sessions printed while they happen: turn by turn for one item at a terminal, or each session as it
finishes (``--follow``).

The printer follows the transcript file the run writes (the writer flushes every line), so it needs no hook in the
runner and sees exactly what ``voirdire show`` will: a background thread reads the lines appended since the run
began, keeps each session's events, and prints the turns of ``voirdire.chat`` that are new, rendered by
``chat.terminal`` (safe text, the protocol's step cards). Turns are printed once: a step that completes an earlier
step's card (DCR's marks beside its reasons) is printed as a card of its own here. Output goes through
``tqdm.write`` so a progress bar stays below it.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TextIO

from pydantic import TypeAdapter, ValidationError

from voirdire.base import mask_secrets
from voirdire.chat.terminal import Style, heading, render_chat, totals_text, turn_lines, use_color
from voirdire.chat.turns import Bubble, chat_of
from voirdire.models import BEFORE_PROMPT
from voirdire.transcript import ErrorEvent, Line, RunHeader, SessionRecord, SessionStart, Verdict

Mode = Literal["turns", "sessions"]


def _waiting(turn: object) -> bool:
    """A reply that may still grow: a call of k samples (the next sample, or the last one's parse failure, may
    follow) or a reply with no call of its own (the other replies of its call may follow)."""
    if not isinstance(turn, Bubble) or turn.kind != "reply":
        return False
    return turn.call is None or turn.call.samples > 1  # its last sample's failure may be the next event
_LINE: TypeAdapter[Line] = TypeAdapter(Line)


@dataclass
class _Session:
    record: SessionRecord
    printed: set[tuple[str, int]] = field(default_factory=set)  # turns printed: kind and seq (branches interleave)
    headed: bool = False
    done: bool = False


def live_mode(*, follow: bool, as_json: bool, single: bool, stream: TextIO | None = None) -> Mode | None:
    """What a run command prints while it runs: every turn of one item at a terminal (or with ``--follow``), each
    session as it ends with ``--follow``; nothing with ``--json`` (stdout is for the JSON)."""
    if as_json:
        return None
    if single and (follow or (stream if stream is not None else sys.stdout).isatty()):
        return "turns"
    return "sessions" if follow else None


class LiveChat:
    """Prints the sessions a run appends to ``path``: every turn as it happens (``turns``) or each session whole
    when it ends (``sessions``). Use as a context manager around the run."""

    def __init__(
        self,
        path: Path,
        *,
        mode: Mode = "turns",
        stream: TextIO | None = None,
        color: bool | None = None,
        interval: float = 0.1,
    ) -> None:
        self.path = Path(path)
        self.mode = mode
        self.stream = stream if stream is not None else sys.stdout
        self.color = use_color(self.stream) if color is None else color
        self.interval = interval
        self.printed_any = False
        self._offset = 0
        self._rest = b""
        self._header: RunHeader | None = None
        self._sessions: dict[tuple[str, str], _Session] = {}
        self._stop = threading.Event()
        self._reading = threading.Lock()  # the follower thread and a flush before a person's turn
        self._thread = threading.Thread(target=self._follow, name="voirdire-live", daemon=True)

    def __enter__(self) -> LiveChat:
        try:
            self._offset = self.path.stat().st_size  # a resumed transcript: only what this run appends
        except OSError:
            self._offset = 0
        self._thread.start()
        BEFORE_PROMPT.append(self.flush)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.flush in BEFORE_PROMPT:
            BEFORE_PROMPT.remove(self.flush)
        self._stop.set()
        self._thread.join()
        self.poll()  # the last lines, written after the thread's last look
        if self.mode == "turns":
            for s in self._sessions.values():
                if s.headed:
                    chat = chat_of(s.record, self._header, merge=False)
                    self._write(Style(self.color)("2", totals_text(chat)))

    def _follow(self) -> None:
        while not self._stop.wait(self.interval):
            self.poll()

    def poll(self) -> None:
        """Read what was appended and print what is new (from the follower thread, or at once by ``flush``)."""
        with self._reading:
            self._poll()

    def _poll(self) -> None:
        try:
            with self.path.open("rb") as fh:
                fh.seek(self._offset)
                data = fh.read()
        except OSError:
            return
        if not data:
            return
        self._offset += len(data)
        data = self._rest + data
        end = data.rfind(b"\n") + 1  # a half-written last line waits for the next look
        self._rest = data[end:]
        changed: dict[tuple[str, str], _Session] = {}
        for raw in data[:end].splitlines():
            self._read(raw, changed)
        for s in changed.values():
            self._show(s)

    def _read(self, raw: bytes, changed: dict[tuple[str, str], _Session]) -> None:
        if not raw.strip():
            return
        try:
            e = _LINE.validate_json(raw)
        except ValidationError:
            return  # a damaged line: `voirdire show` names it; the live view skips it
        if isinstance(e, RunHeader):
            self._header = e
            return
        key = (e.session_id, e.run_id)
        s = self._sessions.get(key)
        if s is None:
            s = self._sessions[key] = _Session(SessionRecord(session_id=e.session_id, run_id=e.run_id, events=[]))
        if isinstance(e, SessionStart):
            s.record.item_id, s.record.item = e.item_id, e.item
        s.record.events.append(e)
        s.done = s.done or isinstance(e, Verdict | ErrorEvent)
        changed[key] = s

    def _show(self, s: _Session) -> None:
        if self.mode == "sessions":
            if s.done and not s.headed:
                s.headed = True
                self._write(render_chat(chat_of(s.record, self._header), color=self.color) + "\n")
            return
        chat = chat_of(s.record, self._header, merge=False)
        lines: list[str] = []
        if not s.headed:
            s.headed = True
            lines.append(heading(chat, self.color))
        turns = chat.turns
        if not s.done and turns and _waiting(turns[-1]):
            turns = turns[:-1]  # the other samples of its call (or this reply's parse failure) follow
        for turn in turns:
            key = (type(turn).__name__, getattr(turn, "seq", -1))
            if key not in s.printed:
                s.printed.add(key)
                lines += turn_lines(turn, chat, color=self.color)
        if lines:
            self._write("\n".join(lines))

    def flush(self) -> None:
        """Print what the run has written so far, now (before a person is asked to reply, so the turn they answer
        is on the screen above the question, not after it)."""
        self.poll()

    def _write(self, text: str) -> None:
        from tqdm import tqdm

        self.printed_any = True
        tqdm.write(mask_secrets(text), file=self.stream)
        self.stream.flush()
