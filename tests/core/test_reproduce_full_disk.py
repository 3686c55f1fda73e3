"""``reproduce`` on a full disk (a 64 KiB tmpfs in a mount namespace of its own): one error naming NAME.json, and
no half-written JSON left behind. Skipped where mounting is not permitted."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHILD = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from voirdire.analysis.reproduce import write
    from voirdire.base import CannotWrite
    from voirdire.reports import Cell, Options, Outcome, Reproduction

    folder = Path(sys.argv[1])
    rep = Reproduction(name="big-table", paper="p", what="w", needs="offline", run=lambda options: Outcome())
    outcome = Outcome(cells=[Cell(label="F1", paper=0.5, ours=0.5)], details={"rows": ["x" * 100] * 2000})
    try:
        write(rep, outcome, Options(), folder, figures=False)
    except CannotWrite as exc:
        print(exc)
        sys.exit(exc.exit_status)
    """
)


def test_reproduce_on_a_full_disk_names_the_file_and_leaves_no_half_json(tmp_path: Path) -> None:
    if shutil.which("unshare") is None:
        pytest.skip("unshare not installed")
    full = tmp_path / "full"
    full.mkdir()
    listing = f'ls -A "{full}" > "{tmp_path / "left.txt"}"'
    script = f'mount -t tmpfs -o size=64k tmpfs "{full}" || exit 77; "$@"; code=$?; {listing}; exit $code'
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        ["unshare", "--mount", "sh", "-c", script, "sh", sys.executable, "-c", CHILD, str(full)],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    if done.returncode == 77:
        pytest.skip(f"mounting is not permitted here: {done.stderr.strip()}")
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.returncode == 5, (done.stdout, done.stderr[-3000:])
    assert f"{full / 'big-table.json'}: no space left on the device" in done.stdout
    assert (tmp_path / "left.txt").read_text().split() == []  # no half-written JSON, no temporary file
