"""People's labels of a run's verdicts: the sidecar ``<transcript>.labels.jsonl`` beside the transcript.

One JSON line per label: the item and session labelled, the verdict the reviewer saw, their reading of it (agree,
disagree, unsure), the label they give (one of the run's verdict words; none when unsure), who, when, an optional
comment and, for a label given in a review queue, the sample it was drawn from. The file is written with the
transcript's own rules: opened for append, each line one write under an exclusive ``flock`` (two browser tabs or a
viewer and a terminal reviewer labelling at once never interleave within a line), a torn last line left by a crash
cut before the next write, flushed and ``fsync``-ed before the write is reported done. The transcript itself is
never opened for writing. A later label by the same annotator for the same item supersedes the earlier one; both
stay in the file (``current`` picks the latest).
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from voirdire.base import VoirdireError, append_all, cannot_write, cut_torn_tail, shown
from voirdire.transcript.schema import utcnow

SUFFIX = ".labels.jsonl"
MAX_COMMENT = 2000  # characters of a comment kept
MAX_NAME = 80  # characters of an annotator's name
READINGS = ("agree", "disagree", "unsure")


class SidecarError(VoirdireError, ValueError):
    """A labels sidecar that cannot be read or a label that cannot be written; the message names the file."""


class LabelSample(BaseModel):
    """The random sample a queued label was drawn from (``voirdire calibrate --sample SIZE --seed SEED``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    size: int = Field(ge=1)
    seed: int


class HumanLabel(BaseModel):
    """One line of the sidecar."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    item_id: str = Field(min_length=1)
    session_id: str = Field(min_length=1)
    verdict: str | None = Field(None, description="the decision the reviewer was shown (or, blind, given after)")
    reading: Literal["agree", "disagree", "unsure"]
    label: str | None = Field(None, description="the verdict word the reviewer gives; None when unsure")
    annotator: str = Field(min_length=1, max_length=MAX_NAME)
    time: str = Field(default_factory=lambda: utcnow().isoformat().replace("+00:00", "Z"))
    comment: str = Field("", max_length=MAX_COMMENT)
    sample: LabelSample | None = None
    blind: bool = False


def sidecar_path(transcript: str | Path) -> Path:
    """``run.jsonl`` → ``run.jsonl.labels.jsonl``, beside it."""
    p = Path(transcript)
    return p.with_name(p.name + SUFFIX)


def clean_text(text: str, limit: int) -> str:
    """A name or comment as kept: control characters made visible (``shown``), cut to ``limit`` characters,
    surrounding blanks dropped (newlines in a comment are kept)."""
    lines = [shown(part) for part in str(text).replace("\r\n", "\n").split("\n")]
    return "\n".join(lines).strip()[:limit]


def why_not_writable(transcript: str | Path) -> str | None:
    """Why labels cannot be written beside ``transcript`` (a read-only folder or sidecar), or None."""
    side = sidecar_path(transcript)
    if side.exists():
        return None if os.access(side, os.W_OK) else f"{side.name} is read-only"
    folder = side.parent
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"the folder {folder} is read-only: labels are written beside the transcript, in {side.name}"
    return None


def append_label(transcript: str | Path, label: HumanLabel) -> Path:
    """Append ``label`` to the sidecar of ``transcript`` durably; returns the sidecar's path."""
    side = sidecar_path(transcript)
    data = (label.model_dump_json() + "\n").encode("utf-8")
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(side, flags, 0o666)
    except OSError as exc:
        raise cannot_write(exc, side, "labels") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        cut_torn_tail(fd)  # a line a killed writer left half-written: cut, so this one starts on its own
        append_all(fd, data)
        os.fsync(fd)
    except OSError as exc:
        raise cannot_write(exc, side, "labels") from None
    finally:
        os.close(fd)  # closing releases the lock
    return side


def read_sidecar(transcript: str | Path) -> list[HumanLabel]:
    """Every line of the sidecar in file order ([] when there is none); a torn last line is skipped, any other bad
    line is an error naming file:line."""
    side = sidecar_path(transcript)
    try:
        raw = side.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise SidecarError(f"{side}: cannot read ({exc.strerror or exc})") from None
    lines = raw.split(b"\n")
    torn = lines[-1] != b""  # no newline after the last line: a write cut short
    out: list[HumanLabel] = []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            out.append(HumanLabel.model_validate(json.loads(line)))
        except (ValueError, ValidationError) as exc:
            if torn and n == len(lines):
                break
            why = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else "not JSON"
            raise SidecarError(f"{side}:{n}: not a label line ({why})") from None
    return out


def current_labels(labels: Iterable[HumanLabel]) -> dict[tuple[str, str], HumanLabel]:
    """(item id, annotator) → the latest label (a later line supersedes an earlier one)."""
    out: dict[tuple[str, str], HumanLabel] = {}
    for label in labels:
        out[(label.item_id, label.annotator)] = label
    return out
