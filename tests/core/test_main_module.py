"""``python -m voirdire`` is the ``voirdire`` command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_python_dash_m_voirdire_is_the_command(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    runs = [
        subprocess.run([sys.executable, "-m", module, "list"], capture_output=True, text=True, cwd=tmp_path, env=env)
        for module in ("voirdire", "voirdire.cli")
    ]
    assert [r.returncode for r in runs] == [0, 0], [r.stderr for r in runs]
    assert runs[0].stdout == runs[1].stdout and "cross_examination" in runs[0].stdout
    bad = subprocess.run(
        [sys.executable, "-m", "voirdire", "nope"], capture_output=True, text=True, cwd=tmp_path, env=env
    )
    assert bad.returncode == 2 and "nope" in bad.stderr
