"""Scripted replies from a YAML/JSON file or a list: regex rules over the last prompt, then replies in order.

A rule's ``match`` is the user's regular expression, run on every prompt. It is compiled and searched with the
``regex`` package (Python's ``re`` syntax, and a timeout ``re`` lacks): one search may take ``MATCH_TIMEOUT_S``,
so a pattern that backtracks catastrophically (``(a+)+$`` on forty a's) is one clear error naming the rule instead
of a run that hangs for ever, deaf to Ctrl-C and to ``kill``, its lock file left behind.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import regex as re
import yaml
from autogen_core.models import AssistantMessage, CreateResult, LLMMessage, RequestUsage
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from voirdire.base import read_text
from voirdire.models.base import ModelSpecError, TextOnlyClient, text_of


class ScriptRule(BaseModel):
    model_config = ConfigDict(extra="forbid")
    match: str = Field(description="regular expression searched in the last user/system message")
    reply: str | None = Field(None, description="the same reply every time the rule matches")
    replies: list[str] | None = Field(None, description="replies consumed in order; an error when used up")


class Script(BaseModel):
    model_config = ConfigDict(extra="forbid")
    replies: list[str] = Field(default_factory=list, description="replies in order, used when no rule matches")
    rules: list[ScriptRule] = Field(default_factory=list)
    default: str | None = None


class ScriptExhausted(RuntimeError):
    pass


class ScriptTimeout(ScriptExhausted):
    """A rule's regular expression took longer than ``MATCH_TIMEOUT_S`` on one prompt."""


MATCH_TIMEOUT_S = 2.0
"""Seconds one rule's search of one prompt may take: a sane pattern takes microseconds on any prompt."""


class ScriptedChatCompletionClient(TextOnlyClient):
    """Replays scripted replies: rules keyed by a regex over the last prompt, then an ordered list.

    Rules make scripts robust to concurrency and to how many questions a protocol asks; the ordered list mirrors
    AutoGen's ``ReplayChatCompletionClient``. Every prompt seen is kept in ``seen`` for assertions.
    """

    family = "scripted"

    def __init__(self, script: Script | list[str], name: str = "scripted"):
        super().__init__()
        self.script = script if isinstance(script, Script) else Script(replies=list(script))
        self.name = name
        self._pattern = [re.compile(r.match, re.IGNORECASE | re.DOTALL) for r in self.script.rules]
        self._used: dict[int, int] = {}
        self._next = 0
        self.seen: list[list[LLMMessage]] = []

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedChatCompletionClient:
        """A script from a YAML/JSON file; every problem is one line naming the file (and the line, where known)."""
        path = Path(path)
        text = read_text(path, "script", ModelSpecError)
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f":{mark.line + 1}" if mark is not None else ""
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise ModelSpecError(f"{path}{where}: invalid script: not YAML ({problem})") from None
        if data is None:
            raise ModelSpecError(f"{path}: empty script (expected rules:, replies: or a list of replies)")
        try:
            script = Script.model_validate(data) if isinstance(data, dict) else Script(replies=data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'script'}: {e['msg']}" for e in exc.errors(include_url=False)
            )
            raise ModelSpecError(f"{path}: invalid script: {problems}") from None
        try:
            return cls(script, name=path.name)
        except re.error as exc:
            raise ModelSpecError(
                f"{path}: invalid script: a rule's match is not a regular expression ({exc})"
            ) from None

    def _reply_for(self, prompt: str) -> str:
        for i, (rule, pattern) in enumerate(zip(self.script.rules, self._pattern, strict=True)):
            try:
                found = pattern.search(prompt, timeout=MATCH_TIMEOUT_S)
            except TimeoutError:
                raise ScriptTimeout(
                    f"{self.name}: rule {i + 1}'s match {rule.match!r} took more than {MATCH_TIMEOUT_S:g} s on a "
                    f"prompt of {len(prompt):,} characters (it backtracks without end, as (a+)+$ does): simplify it"
                ) from None
            if not found:
                continue
            if rule.reply is not None:
                return rule.reply
            used = self._used.get(i, 0)
            if rule.replies is not None and used < len(rule.replies):
                self._used[i] = used + 1
                return rule.replies[used]
            raise ScriptExhausted(f"{self.name}: rule {rule.match!r} has no replies left")
        if self._next < len(self.script.replies):
            self._next += 1
            return self.script.replies[self._next - 1]
        if self.script.default is not None:
            return self.script.default
        raise ScriptExhausted(f"{self.name}: no scripted reply left for prompt {prompt[:80]!r}")

    async def _complete(self, messages: Sequence[LLMMessage], args: Mapping[str, Any]) -> CreateResult:
        self.seen.append(list(messages))
        last = next((m for m in reversed(messages) if not isinstance(m, AssistantMessage)), None)
        text = self._reply_for(text_of(last) if last else "")
        tokens = sum(len(text_of(m).split()) for m in messages)
        return CreateResult(
            finish_reason="stop",
            content=text,
            usage=RequestUsage(prompt_tokens=tokens, completion_tokens=len(text.split())),
            cached=False,
        )
