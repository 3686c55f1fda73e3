"""A cache of model replies keyed by request digest (model, messages, generation settings).

Re-running an experiment (another metric, a resumed run, a fixed bug in scoring) then costs no model calls for
requests already answered. Only deterministic requests are cached: greedy decoding or a fixed seed. A sampled
request without a seed (the follow-ups of LMvLM (Majority)) must be drawn afresh each time. Replies are written
through ``voirdire.base.secrets.mask_secrets``, like everything else voirdire writes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from voirdire.base import TOKEN_COUNT_MAX, cannot_write, mask_tree, too_deep
from voirdire.transcript.io import drop_torn_tail


class CachedReply(BaseModel):
    text: str
    prompt_tokens: int = Field(0, ge=0, le=TOKEN_COUNT_MAX)  # a cache file is read from outside too
    completion_tokens: int = Field(0, ge=0, le=TOKEN_COUNT_MAX)
    finish_reason: str | None = None
    enforcement: str | None = None
    # The provider's prompt cache on the call that made the reply (a reply served from this file bills nothing).
    cache_read_tokens: int = Field(0, ge=0, le=TOKEN_COUNT_MAX)
    cache_write_tokens: int = Field(0, ge=0, le=TOKEN_COUNT_MAX)


def cacheable(args: Mapping[str, Any]) -> bool:
    return not args.get("temperature") or args.get("seed") is not None


class ResponseCache:
    """Append-only JSONL (``{"digest": ..., "reply": {...}}`` per line); a torn last line is skipped."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._replies: dict[str, CachedReply] = {}
        if self.path.exists():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                try:
                    if too_deep(line.encode()):
                        continue
                    rec = json.loads(line)
                    self._replies[rec["digest"]] = CachedReply.model_validate(rec["reply"])
                except (KeyError, TypeError, ValueError):  # JSONDecodeError and ValidationError are ValueErrors
                    continue  # a torn, foreign or forged line costs one model call, never a crash
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists():
            drop_torn_tail(self.path)  # so the first new record does not land on a half line

    def __len__(self) -> int:
        return len(self._replies)

    def get(self, digest: str) -> CachedReply | None:
        return self._replies.get(digest)

    def put(self, digest: str, reply: CachedReply) -> None:
        self._replies[digest] = reply
        try:
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps({"digest": digest, "reply": mask_tree(reply.model_dump())}) + "\n")
        except OSError as exc:  # a full disk stops the run with one message, not every session with its own
            raise cannot_write(exc, self.path, "--cache") from None
