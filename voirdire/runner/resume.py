"""Resume: what a transcript already holds of this run, read under the run's lock.

A transcript is resumed only by a run of the same protocol, dataset, parameters, models and prompts; its finished
sessions (those with a verdict) are kept and skipped, and each must have been run on the same item.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from voirdire.errors import VoirdireError
from voirdire.secrets import mask_tree
from voirdire.transcript import RunHeader, Transcript, Verdict, load_outline


class ResumeError(VoirdireError, ValueError):
    """The output transcript belongs to a different run (protocol, dataset, parameters or models differ)."""


# How to start over, said by every refusal to resume: the command line's and the Python API's words.
START_OVER = "use another --out (out=), or --fresh (fresh=True) to start over"


@dataclass
class Resumed:
    """What a run takes over from its transcript: the sessions already finished, and their verdicts (when kept)."""

    finished: set[str] = field(default_factory=set)
    verdicts: dict[str, Verdict] = field(default_factory=dict)


def resume(
    out: Path, header: RunHeader, items: Mapping[str, BaseModel], *, resume: bool, keep_verdicts: bool
) -> Resumed:
    """The finished sessions of ``items`` (by session id) in ``out``, checked to be this run's; with
    ``resume=False`` the file is emptied instead. Called under the run's lock (``voirdire.runner.lock``)."""
    if not out.exists() or out.stat().st_size == 0:
        return Resumed()
    if not resume:
        # Emptied, not removed: the run holds its lock on this file (``voirdire.runner.lock``), which a new file
        # at the path would not carry.
        os.truncate(out, 0)
        return Resumed()
    done = resumable(out, header)
    resumed = Resumed(finished=done.finished() & set(items))
    for sid in resumed.finished:
        if done.sessions[sid].item != mask_tree(items[sid].model_dump(mode="json")):
            raise ResumeError(f"{out}: session {sid!r} was run on a different item; {START_OVER}")
        if keep_verdicts:
            resumed.verdicts[sid] = done.sessions[sid].verdict  # type: ignore[assignment]
    return resumed  # ``done``, every event outline of the earlier runs, is not kept for the length of this one


def resumable(out: Path, header: RunHeader) -> Transcript:
    """The transcript already at ``out``, if it is a run of the same protocol, parameters, models and prompts.

    A file holding only headers (a run that failed before its first session) does not bind the next run.
    """
    previous = load_outline(out)
    last = next(
        (h for h in reversed(previous.headers) if any(s.run_id == h.run_id for s in previous.sessions.values())), None
    )
    if last is None:
        return previous
    if last.dataset and header.dataset and not _same_dataset(last.dataset, header.dataset):
        raise ResumeError(f"{out}: holds a run on another dataset ({last.dataset}, not {header.dataset}); {START_OVER}")
    for name in ("protocol", "parameters", "roles", "prompts"):
        if getattr(last, name) != getattr(header, name):
            raise ResumeError(f"{out}: holds a run with different {name} ({getattr(last, name)!r}); {START_OVER}")
    return previous


def _same_dataset(recorded: str, given: str) -> bool:
    """Whether two dataset paths name the same file (as written, normalised, or on disk)."""
    if recorded == given or os.path.normpath(recorded) == os.path.normpath(given):
        return True
    try:
        return os.path.samefile(recorded, given)
    except OSError:
        return False
