"""Loading a sentence-transformers model leaves no third-party progress bar on stderr (transformers' "Loading
weights"), and leaves transformers' own setting as the caller had it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("sentence_transformers")

PROGRAM = """
from transformers.utils import logging
from voirdire.models.encoders import sentence_encoder
print(sentence_encoder().encode(["a"]).shape, logging.is_progress_bar_enabled())
"""


def test_the_encoder_loads_without_a_progress_bar() -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "(1, 384) True" in done.stdout  # encoded; the caller's progress bars still on
    assert "Loading weights" not in done.stderr and "it/s" not in done.stderr
