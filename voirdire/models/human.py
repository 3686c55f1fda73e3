"""A person plays a role at the terminal (``--model ROLE=human``).

Before each reply the person sees what the role has seen so far: the role's conversation (its instructions, the
claim it defends, the questions it was asked, its own earlier answers), in full the first time and then only what
is new. The reply is read from standard input up to an empty line. An empty reply is refused and asked for again;
the end of input before any text raises ``HumanInputEnded`` rather than recording an empty answer (the runner
records it as that session's error, so a resumed run asks again). Every reply a person gives is recorded with the
model label ``human`` (the spec's label), which is how transcripts and readers mark that a human spoke.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, TextIO

from autogen_core.models import AssistantMessage, CreateResult, LLMMessage, RequestUsage, SystemMessage

from voirdire.base import VoirdireError
from voirdire.models.base import TextOnlyClient, text_of

RULE = "─" * 72
# Called before a person is asked (a live chat prints the turns written so far, so the turn they answer is above).
BEFORE_PROMPT: list[Callable[[], None]] = []


class HumanInputEnded(VoirdireError, EOFError):
    """Standard input ended before the person answered; nothing is recorded for that reply."""


def read_reply(stream: TextIO) -> tuple[str, bool]:
    """Lines up to an empty line; returns the text and whether the input ended."""
    lines: list[str] = []
    while True:
        line = stream.readline()
        if not line:
            return "\n".join(lines), True
        if not line.strip():
            if lines:
                return "\n".join(lines), False
            return "", False
        lines.append(line.rstrip("\n"))


def _speaker(m: LLMMessage) -> str:
    if isinstance(m, SystemMessage):
        return "instructions"
    if isinstance(m, AssistantMessage):
        return "you"
    return str(getattr(m, "source", "") or "moderator")


class HumanClient(TextOnlyClient):
    """A person plays the role: they see the role's conversation so far and type the reply."""

    family = "human"
    _terminal: ClassVar[threading.Lock] = threading.Lock()  # one person: prompts of concurrent sessions never mix

    def __init__(self, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        super().__init__()
        self._stdin = stdin
        self._stdout = stdout
        self._shown: list[tuple[str, str]] = []  # the conversation as last shown
        self._ended = False

    async def _complete(self, messages: Sequence[LLMMessage], args: Mapping[str, Any]) -> CreateResult:
        text = await asyncio.to_thread(self._ask, list(messages))
        return CreateResult(
            finish_reason="stop",
            content=text,
            usage=RequestUsage(prompt_tokens=0, completion_tokens=0),
            cached=False,
        )

    def context(self, messages: Sequence[LLMMessage]) -> str:
        """What to show before this reply: the conversation so far, only the new part when the earlier part was
        already shown."""
        entries = [(_speaker(m), text_of(m)) for m in messages]
        role = next((str(m.source) for m in messages if isinstance(m, AssistantMessage) and m.source), None)
        earlier = self._shown
        fresh = bool(earlier) and entries[: len(earlier)] == earlier
        new = entries[len(earlier) :] if fresh else entries
        self._shown = entries
        lines = [RULE, f"your turn{f' as {role}' if role else ''}"]
        if fresh:
            lines.append(f"(the {len(earlier)} earlier messages of this conversation are above)")
        else:
            lines.append("what this role has seen so far:")
        for n, (speaker, text) in enumerate(new, 1):
            label = f"{speaker} · answer this" if n == len(new) and speaker not in ("you", "instructions") else speaker
            lines.append(f"[{label}]")
            lines.extend("  " + line for line in (text.splitlines() or [""]))
        lines.append("(type your answer, then an empty line; end of input stops without answering)")
        return "\n".join(lines)

    def _ask(self, messages: list[LLMMessage]) -> str:
        with self._terminal:
            out = self._stdout or sys.stderr
            stream = self._stdin or sys.stdin
            if self._ended or stream is None or stream.closed:
                raise HumanInputEnded("the input has ended: no answer to record")
            for hook in list(BEFORE_PROMPT):
                hook()
            print(self.context(messages), file=out, flush=True)
            while True:
                text, ended = read_reply(stream)
                if text.strip():
                    return text
                if ended:
                    self._ended = True
                    raise HumanInputEnded("end of input before an answer; nothing recorded for this reply")
                print("(an empty answer is not recorded: type your answer, then an empty line)", file=out, flush=True)
