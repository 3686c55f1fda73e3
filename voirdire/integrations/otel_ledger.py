"""What was sent where: the ledger ``<transcript>.otel-sent`` beside a transcript, one JSON line per session
whose trace a receiver accepted (the receiver's traces URL, the run and session ids, the trace id, when).

A session's trace and span ids are derived from its ids, so sending it again repeats them: Phoenix keeps the
first copy of a span id and drops the rest, but a receiver that stores whatever it is sent (a collector writing
to a file, a tracing backend that does not key spans by id) would keep both. The ledger lets ``voirdire export
otel`` send only what a receiver has not had, and refuse when it has had everything. The file is appended to
under an exclusive lock, one write a batch; a torn last line is skipped when read. It is named without
``.jsonl`` so that no command takes it for a transcript.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterable
from pathlib import Path

from voirdire.base import redact_url
from voirdire.transcript import utcnow

SUFFIX = ".otel-sent"


def ledger_path(transcript: Path) -> Path:
    """``run.jsonl`` → ``run.jsonl.otel-sent``, beside it."""
    return transcript.with_name(transcript.name + SUFFIX)


class Ledger:
    """The sessions of one transcript that a receiver has accepted."""

    def __init__(self, transcript: Path, receiver: str) -> None:
        self.path = ledger_path(transcript)
        self.receiver = redact_url(receiver)
        self.failure: str | None = None

    def sent(self) -> set[tuple[str, str]]:
        """(run id, session id) of every session this receiver accepted from the transcript."""
        try:
            raw = self.path.read_bytes()
        except OSError:
            return set()
        found = set()
        for line in raw.split(b"\n"):
            with contextlib.suppress(ValueError, KeyError, TypeError):
                entry = json.loads(line)
                if entry["receiver"] == self.receiver:
                    found.add((str(entry["run_id"]), str(entry["session_id"])))
        return found

    def record(self, sessions: Iterable[tuple[str, str, str]]) -> None:
        """Note (run id, session id, trace id) as accepted; a ledger that cannot be written is said once at the
        end (``failure``), never raised into the run."""
        when = utcnow().isoformat().replace("+00:00", "Z")
        lines = [json.dumps({"receiver": self.receiver, "run_id": run, "session_id": session, "trace_id": trace,
                             "time": when}, ensure_ascii=False) + "\n" for run, session, trace in sessions]  # fmt: skip
        if not lines or self.failure is not None:
            return
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(self.path, flags, 0o666)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                data = "".join(lines).encode("utf-8")
                while data:
                    data = data[os.write(fd, data) :]
            finally:
                os.close(fd)
        except OSError as exc:
            self.failure = f"{self.path.name}: {exc.strerror or exc}"
