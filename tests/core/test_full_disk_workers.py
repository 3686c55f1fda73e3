"""A really full disk (a 256 KiB tmpfs, in a mount namespace of its own) under ``--cache --workers 2``: exit status
5 and one line naming the file on stderr, no traceback from the run or its workers; the same command resumes once
there is room. Skipped where mounting is not permitted."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.chaos.server import ChaosServer

ROOT = Path(__file__).resolve().parents[2]
CHILD = """
import sys
from tests.chaos.protocol import registration
from voirdire import registry
from voirdire.registry import plugins
regs = {"chaos": registration}
for module in (registry, plugins):
    module.registrations = lambda: regs
    module.command_plugins = lambda: ()
from voirdire.cli import main
sys.exit(main(sys.argv[1:]))
"""


def answer(messages: list[dict[str, str]]) -> str:
    last = messages[-1]["content"] if messages else ""
    return "correct" if last.startswith("Is the answer right") else "Paris. " + "y" * 400  # long: fills the cache


def test_a_full_cache_disk_with_two_workers_exits_5_with_one_line(tmp_path: Path) -> None:
    if shutil.which("unshare") is None:
        pytest.skip("unshare not installed")
    data, out, full = tmp_path / "qs.jsonl", tmp_path / "t.jsonl", tmp_path / "full"
    full.mkdir()
    data.write_text("".join(json.dumps({"id": f"q{i:03d}", "question": f"Capital {i}?"}) + "\n" for i in range(300)))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    with ChaosServer(answer) as server:
        args = ["run", "chaos", "--data", str(data), "--out", str(out), "--cache", str(full / "cache.jsonl"),
                "--no-progress", "--workers", "2", "--model", f"openai-compatible:m@{server.url}"]  # fmt: skip
        script = f'mount -t tmpfs -o size=256k tmpfs "{full}" || exit 77; exec "$@"'
        done = subprocess.run(
            ["unshare", "--mount", "sh", "-c", script, "sh", sys.executable, "-c", CHILD, *args],
            capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path,
        )  # fmt: skip
        if done.returncode == 77:
            pytest.skip(f"mounting is not permitted here: {done.stderr.strip()}")
        assert done.returncode == 5, done.stderr[-3000:]
        assert "Traceback" not in done.stderr, done.stderr[-3000:]
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"voirdire: error: --cache {full / 'cache.jsonl'}: no space")
        # Room again (the tmpfs went with its namespace): the same command resumes to the end.
        again = subprocess.run([sys.executable, "-c", CHILD, *args], capture_output=True, text=True, env=env,
                               timeout=300, cwd=tmp_path)  # fmt: skip
        assert again.returncode == 0, again.stderr[-3000:]
