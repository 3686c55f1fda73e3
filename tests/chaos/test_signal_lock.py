"""A run ended by SIGTERM (or SIGHUP) ends as Ctrl-C ends it: its sessions cancelled, exit status 130, and its lock
file removed (the default action killed the process and left ``<out>.lock`` behind, which the viewer reads as a
run still writing)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.chaos.protocol import replies
from tests.chaos.server import ChaosServer


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_run_ended_by_a_signal_releases_its_lock(sig: signal.Signals, tmp_path: Path) -> None:
    out, lock = tmp_path / "t.jsonl", tmp_path / "t.jsonl.lock"
    with ChaosServer(replies, lambda index, body: "hang", hang_s=120) as server:
        command = [sys.executable, "-m", "voirdire", "examine", "The claim is X.", "--no-progress", "--model",
                   f"openai-compatible:m@{server.url}", "--timeout", "600", "--out", str(out)]  # fmt: skip
        # the run starts with the signal's default action, as from a shell: a disposition this worker inherited (a
        # library may ignore SIGHUP) would pass to the run, which keeps an ignored signal ignored
        proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                preexec_fn=lambda: signal.signal(sig, signal.SIG_DFL))  # fmt: skip
        try:
            for _ in range(2400):  # until the run holds its lock and waits on the endpoint (start-up takes seconds)
                if (lock.exists() and server.log) or proc.poll() is not None:
                    break
                time.sleep(0.05)
            assert lock.exists() and server.log, proc.communicate(timeout=60)
            os.kill(proc.pid, sig)
            _, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 130, err
    assert b"interrupted" in err and not lock.exists()
