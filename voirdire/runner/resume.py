"""Resume: what a transcript already holds of this run, read under the run's lock.

A transcript is resumed only by a run of the same protocol, dataset, parameters, models and prompts; its finished
sessions (those with a verdict) are kept and skipped, and each must have been run on the same item.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from voirdire.base import VoirdireError, mask_tree
from voirdire.transcript import RunHeader, Transcript, Verdict, load_outline


@dataclass(frozen=True)
class Difference:
    """What differs between the run a transcript holds and the run asked for: ``what`` is ``protocol``,
    ``dataset``, ``parameters`` (``key``: the parameter), ``roles`` (``key``: ``ROLE.SETTING``), ``prompts``
    (``key``: the prompt file) or ``item`` (``key``: the session id); the values as recorded and as given now."""

    what: str
    key: str
    recorded: Any
    given: Any


class ResumeError(VoirdireError, ValueError):
    """The output transcript belongs to a different run (protocol, dataset, parameters or models differ).

    ``difference`` says what differs, so the command line can name it by its option (``voirdire.cli.run``);
    the message names it in the Python API's words."""

    def __init__(self, message: str, *, out: Path | None = None, difference: Difference | None = None) -> None:
        super().__init__(message)
        self.out = out
        self.difference = difference


# How to start over, said by every refusal to resume, in the Python API's words (the command line says its own).
START_OVER = "pass another out, or fresh=True to start over"


@dataclass
class Resumed:
    """What a run takes over from its transcript: the sessions already finished, and their verdicts (when kept)."""

    finished: set[str] = field(default_factory=set)
    verdicts: dict[str, Verdict] = field(default_factory=dict)


def resume(
    out: Path, header: RunHeader, items: Iterable[tuple[str, BaseModel]], *, resume: bool, keep_verdicts: bool
) -> Resumed:
    """The finished sessions of ``items`` ((session id, item) pairs, taken one at a time) in ``out``, checked to
    be this run's; with ``resume=False`` the file is emptied instead. What is kept is session ids (and verdicts
    when asked), never items or records. Called under the run's lock (``voirdire.runner.lock``)."""
    if not out.exists() or out.stat().st_size == 0:
        return Resumed()
    if not resume:
        # Emptied, not removed: the run holds its lock on this file (``voirdire.runner.lock``), which a new file
        # at the path would not carry.
        os.truncate(out, 0)
        return Resumed()
    done = resumable(out, header)
    finished, resumed = done.finished(), Resumed()
    for sid, item in items:
        if sid not in finished:
            continue
        if done.sessions[sid].item != mask_tree(item.model_dump(mode="json")):
            raise ResumeError(
                f"{out}: session {sid!r} was run on a different item; {START_OVER}",
                out=out,
                difference=Difference("item", sid, None, None),
            )
        resumed.finished.add(sid)
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
        raise ResumeError(
            f"{out}: holds a run on another dataset ({last.dataset}, not {header.dataset}); {START_OVER}",
            out=out,
            difference=Difference("dataset", "", last.dataset, header.dataset),
        )
    for name in ("protocol", "parameters", "roles", "prompts"):
        found = first_difference(name, getattr(last, name), getattr(header, name))
        if found is not None:
            where = f" ({found.key}: {found.recorded!r} there, {found.given!r} now)" if found.key else ""
            raise ResumeError(
                f"{out}: holds a run with different {name}{where}; {START_OVER}", out=out, difference=found
            )
    return previous


def _same_dataset(recorded: str, given: str) -> bool:
    """Whether two dataset paths name the same file (as written, normalised, or on disk)."""
    if recorded == given or os.path.normpath(recorded) == os.path.normpath(given):
        return True
    try:
        return os.path.samefile(recorded, given)
    except OSError:
        return False


def first_difference(what: str, recorded: Any, given: Any) -> Difference | None:
    """The first value that differs between two header fields, down to a parameter or a role's setting."""
    if recorded == given:
        return None
    if not (isinstance(recorded, Mapping) and isinstance(given, Mapping)):
        return Difference(what, "", recorded, given)
    for key in sorted(set(recorded) | set(given), key=str):
        a, b = recorded.get(key), given.get(key)
        if a == b:
            continue
        if what == "roles" and isinstance(a, BaseModel) and isinstance(b, BaseModel):
            a_fields, b_fields = a.model_dump(mode="json"), b.model_dump(mode="json")
            setting = next(k for k in sorted(set(a_fields) | set(b_fields)) if a_fields.get(k) != b_fields.get(k))
            return Difference(what, f"{key}.{setting}", a_fields.get(setting), b_fields.get(setting))
        return Difference(what, str(key), a, b)
    return Difference(what, "", recorded, given)  # pragma: no cover - equal mappings compare equal
