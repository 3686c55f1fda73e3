"""One run at a time per transcript: ``exclusive(out)`` holds ``<out>.lock`` for the length of a run."""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from voirdire.runner.resume import ResumeError

_HELD: set[int] = set()
"""The descriptors of the locks this process holds. A fork (``--workers``) inherits them, and with them the locks:
a worker left running after its run was killed would keep the transcript locked, and the same command run again
refused, until it noticed. The child closes its copies at once; the parent's locks stay (``flock`` is released
when every descriptor of the open file is closed, or by an unlock, which the child never sends)."""


def _close_inherited() -> None:
    for fd in list(_HELD):
        with contextlib.suppress(OSError):
            os.close(fd)
    _HELD.clear()


os.register_at_fork(after_in_child=_close_inherited)


@contextmanager
def exclusive(out: Path) -> Iterator[None]:
    """One run at a time per transcript: a second one would redo unfinished sessions or unlink the file.

    The lock is ``<out>.lock``, held with ``flock`` and removed at the end. A run that locks the file checks that
    the path still names the file it locked: one removed meanwhile (by the run that held it) no longer guards
    anything, so it opens the path again. The holder removes the file while it still holds the lock, then
    releases it: whoever locks the old file next sees it was removed, and only the new file at the path counts.
    The lock sits beside the file ``out`` really names (symbolic links resolved): two paths to one transcript, a
    link to it among them, share one lock.

    The transcript itself is held with ``flock`` too, for the run's length: a lock on the file (its device and
    inode), not on a name, so a hard link to it or the same file bind-mounted on another path (names no path
    lock can tell are one file) is refused as well. A transcript not there yet is created empty to be held, and
    removed at the end if the run wrote nothing to it.
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    real = out.resolve()
    real.parent.mkdir(parents=True, exist_ok=True)
    lock = real.with_name(real.name + ".lock")
    fh = _acquire(lock, out)
    _HELD.add(fh.fileno())
    try:
        with _hold_file(real, out), _signals_interrupt():
            yield
    finally:
        try:
            if _same_file(fh, lock):
                lock.unlink(missing_ok=True)
        finally:
            _HELD.discard(fh.fileno())
            fcntl.flock(fh, fcntl.LOCK_UN)
            fh.close()


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


@contextmanager
def _signals_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP end the run as Ctrl-C does (``KeyboardInterrupt``): the sessions are cancelled, every
    ``finally`` runs and the lock file is removed. Their default action killed the process on the spot and left
    ``<out>.lock`` behind, which the viewer reads as a run still writing. Only where Python lets a handler be set
    (the main thread) and no one set one before; the handlers are put back at the end."""
    saved: dict[signal.Signals, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(sig) is signal.SIG_DFL:
                saved[sig] = signal.signal(sig, _interrupt)
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


@contextmanager
def _hold_file(real: Path, out: Path) -> Iterator[None]:
    """``flock`` on the transcript file itself (whatever path reached it) for the length of the block."""
    created = False
    try:
        fd = os.open(real, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        fd = os.open(real, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o666)
        created = True
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ResumeError(f"{out}: another run is writing this transcript (through another path)") from None
        _HELD.add(fd)
        try:
            yield
        finally:
            _HELD.discard(fd)
            if created and _empty_same(fd, real):  # the run wrote nothing: leave no file it did not ask for
                real.unlink(missing_ok=True)
    finally:
        os.close(fd)  # releases the flock


def _empty_same(fd: int, path: Path) -> bool:
    try:
        here, there = os.fstat(fd), os.stat(path)
    except FileNotFoundError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino) and there.st_size == 0


def _same_file(fh: Any, path: Path) -> bool:
    try:
        here, there = os.fstat(fh.fileno()), os.stat(path)
    except FileNotFoundError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def _acquire(lock: Path, out: Path) -> Any:
    """The lock file at ``lock``, opened and locked; a ResumeError when another run holds it."""
    for _ in range(100):
        fh = lock.open("a")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.close()
            raise ResumeError(f"{out}: another run is writing this transcript") from None
        if _same_file(fh, lock):
            return fh
        fcntl.flock(fh, fcntl.LOCK_UN)  # locked a file its holder had just removed: try the path again
        fh.close()
    raise ResumeError(f"{out}: could not lock {lock}")  # pragma: no cover - a path replaced 100 times over
