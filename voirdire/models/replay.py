"""Recorded model replies, replayed: a CI job that needs no key and no network, and answers the same every time.

``VOIRDIRE_REPLAY=DIR`` answers every model call of every role from the recordings in ``DIR`` (the pytest plugin's
``--voirdire-replay DIR`` sets it); a call with no recording is an error naming the role's model and the prompt's
start, never a request sent. With ``VOIRDIRE_RECORD=1`` beside it, calls go to the real models and each reply is
added to ``DIR``. A recording is keyed by the model spec, the messages and the generation settings; the same request
made again (LMvLM (Majority)'s sampled follow-ups, ``--repeats``) takes the recorded replies in their recorded
order, so a replay gives each occurrence the reply its occurrence got, not one reply for all.

The recordings are one JSONL file (``recordings.jsonl``), masked like every file voirdire writes and as durable as a
transcript: each line is appended under an exclusive ``flock`` of the file (two recording processes never
interleave within a line), after cutting a torn last line that a writer killed mid-write left; a reader skips such
a torn last line, and any other bad line is an error naming ``file:line`` and the field.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from autogen_core.models import ChatCompletionClient, CreateResult, LLMMessage, RequestUsage

from voirdire.base import VoirdireError, append_all, cannot_write, cut_torn_tail, mask_secrets, mask_tree, token_count
from voirdire.models.base import TIMEOUT_ARG, Completion, TextOnlyClient, text_of

REPLAY_ENV = "VOIRDIRE_REPLAY"
RECORD_ENV = "VOIRDIRE_RECORD"
FILE_NAME = "recordings.jsonl"
_UNKEYED = {TIMEOUT_ARG}  # how long a call may take is not what it asks


class ReplayMissing(VoirdireError, LookupError):
    """A call replay has no recording for: the test asks something the recording never saw."""


class ReplayError(ReplayMissing):
    """A recordings file that cannot be read: the message names ``file:line`` and what is wrong there."""


def _recording(line: bytes) -> tuple[str, dict[str, Any]]:
    """A recording line's key and reply, each field checked (``ReplayError`` saying which is wrong)."""
    try:
        rec = json.loads(line)
    except UnicodeDecodeError:
        raise ReplayError("not UTF-8 text") from None
    except ValueError:
        raise ReplayError("not a recording line (not JSON)") from None
    if not isinstance(rec, dict):
        raise ReplayError(f"not a recording line (a JSON {type(rec).__name__}, not an object)")
    for name in ("key", "reply"):
        if name not in rec:
            raise ReplayError(f"not a recording line (no {name!r} field)")
    key, reply = rec["key"], rec["reply"]
    if not isinstance(key, str):
        raise ReplayError("key: expected a string")
    if not isinstance(reply, dict):
        raise ReplayError("reply: expected an object")
    texts = reply.get("texts")
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        raise ReplayError("reply.texts: expected a list of at least one string")
    for name in ("prompt_tokens", "completion_tokens"):
        if token_count(reply.get(name)) is None:
            raise ReplayError(f"reply.{name}: expected a whole number of tokens, got {reply.get(name)!r}"[:200])
    for name in ("finish_reason", "enforcement"):
        if not isinstance(reply.get(name), str | None):
            raise ReplayError(f"reply.{name}: expected a string or null")
    requests = reply.get("requests", 1)
    if isinstance(requests, bool) or not isinstance(requests, int) or requests < 1:
        raise ReplayError(f"reply.requests: expected a whole number of at least 1, got {requests!r}"[:200])
    return key, reply


def replay_dir() -> Path | None:
    """The recordings folder when replay (or recording) is on, else None."""
    value = os.environ.get(REPLAY_ENV, "").strip()
    return Path(value) if value else None


def recording() -> bool:
    return replay_dir() is not None and os.environ.get(RECORD_ENV, "") not in ("", "0")


def request_key(model: str, messages: Sequence[LLMMessage], args: Mapping[str, Any], n: int) -> str:
    """The digest a recording is found by: the model spec, each message's kind and text, the settings asked."""
    asked = {k: v for k, v in args.items() if k not in _UNKEYED}
    payload = [model, [(type(m).__name__, text_of(m)) for m in messages], asked, n]
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


class Recordings:
    """One folder's recordings: read once, taken in recorded order per key, appended while recording."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / FILE_NAME
        self._lock = threading.Lock()
        self._replies: dict[str, list[dict[str, Any]]] = {}
        self._taken: dict[str, int] = {}
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return
        except OSError as exc:
            raise ReplayError(f"{self.path}: cannot read ({exc.strerror or exc})") from None
        lines = raw.split(b"\n")
        torn = lines[-1] != b""  # no newline after the last line: a write cut short
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                key, reply = _recording(line)
            except ReplayError as exc:
                if torn and n == len(lines):
                    break  # a recording killed mid-write: the calls it held are recorded again
                raise ReplayError(f"{self.path}:{n}: {exc}") from None
            self._replies.setdefault(key, []).append(reply)

    def take(self, key: str, model: str, messages: Sequence[LLMMessage]) -> dict[str, Any]:
        with self._lock:
            replies = self._replies.get(key, [])
            i = self._taken.get(key, 0)
            if i >= len(replies):
                last = text_of(messages[-1]) if messages else ""
                more = f" (the request was recorded {len(replies)} times)" if replies else ""
                raise ReplayMissing(
                    f"{self.path}: no recording for a call to {mask_secrets(model)}{more}; its prompt begins "
                    f"{mask_secrets(' '.join(last.split())[:120])!r}: record it with --voirdire-record "
                    f"({RECORD_ENV}=1)"
                )
            self._taken[key] = i + 1
            return replies[i]

    def add(self, key: str, model: str, reply: Mapping[str, Any]) -> None:
        line = json.dumps({"key": key, "model": mask_secrets(model), "reply": mask_tree(dict(reply))}) + "\n"
        data = line.encode("utf-8")
        with self._lock:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o666)
            except OSError as exc:
                raise cannot_write(exc, self.path, "--voirdire-record") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                cut_torn_tail(fd)  # a line a killed recorder left half-written: cut, so this one starts its own
                append_all(fd, data)
            except OSError as exc:
                raise cannot_write(exc, self.path, "--voirdire-record") from None
            finally:
                os.close(fd)  # closing releases the lock


_OPEN: dict[Path, Recordings] = {}


def recordings(folder: Path) -> Recordings:
    folder = folder.resolve()
    if folder not in _OPEN:
        _OPEN[folder] = Recordings(folder)
    return _OPEN[folder]


def forget() -> None:
    """Drop the recordings read so far (a test session that starts a replay again reads the folder afresh)."""
    _OPEN.clear()


def _as_record(c: Completion) -> dict[str, Any]:
    return {
        "texts": c.texts,
        "prompt_tokens": c.usage.prompt_tokens,
        "completion_tokens": c.usage.completion_tokens,
        "finish_reason": c.finish_reason,
        "enforcement": c.enforcement,
        "requests": c.requests,
    }


def _from_record(rec: Mapping[str, Any]) -> Completion:
    return Completion(
        texts=[str(t) for t in rec["texts"]],
        usage=RequestUsage(prompt_tokens=int(rec["prompt_tokens"]), completion_tokens=int(rec["completion_tokens"])),
        finish_reason=rec.get("finish_reason"),
        enforcement=rec.get("enforcement"),
        requests=int(rec.get("requests", 1)),
    )


class ReplayClient(TextOnlyClient):
    """Answers from recordings; with ``inner`` (recording), asks ``inner`` and keeps its reply."""

    def __init__(self, model: str, store: Recordings, inner: ChatCompletionClient | None = None) -> None:
        super().__init__()
        self.model, self.store, self.inner = model, store, inner
        self.enforces = getattr(inner, "enforces", "validated")
        self.family = getattr(inner, "family", self.family)

    async def complete(self, messages: Sequence[LLMMessage], args: Mapping[str, Any], n: int = 1) -> Completion:
        key = request_key(self.model, messages, args, n)
        if self.inner is None:
            return _from_record(self.store.take(key, self.model, messages))
        if isinstance(self.inner, TextOnlyClient):
            done = await self.inner.complete(messages, args, n)
        else:
            done = await super().complete(messages, args, n)
        self.store.add(key, self.model, _as_record(done))
        return done

    async def _complete(self, messages: Sequence[LLMMessage], args: Mapping[str, Any]) -> CreateResult:
        if self.inner is None:
            c = await self.complete(messages, args)
            return CreateResult(finish_reason=c.finish_reason or "stop", content=c.texts[0], usage=c.usage, cached=True)  # type: ignore[arg-type]
        plain = {k: v for k, v in args.items() if k != TIMEOUT_ARG}
        return await self.inner.create(messages, extra_create_args=plain)

    async def close(self) -> None:
        if self.inner is not None:
            await self.inner.close()


def replayed(model: str, build: Callable[[], ChatCompletionClient]) -> ChatCompletionClient:
    """The client a run uses for ``model``: the real one (``build``), or under replay one that answers from the
    recordings without building it (no key is looked up, no connection made), or one that records it."""
    folder = replay_dir()
    if folder is None:
        return build()
    store = recordings(folder)
    return ReplayClient(model, store, build() if recording() else None)
