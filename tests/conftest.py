from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
SHARED = Path(__file__).resolve().parent.parent.parent / "shared"


@pytest.fixture
def shared_data() -> Path:
    path = SHARED / "data"
    if not path.is_dir():
        pytest.skip("../shared/data is not beside this checkout")
    return path


@pytest.fixture(scope="session")
def ray_folder() -> Iterator[Path]:
    """One short temporary folder for every Ray instance of this test process (its socket paths must fit in 107
    bytes): Ray keeps where its first instance lived, and a later instance under another folder never starts."""
    folder = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def ray_home(ray_folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where Ray may write, as its temp folder and as HOME (it saves an auth token under ~/.ray); no usage
    statistics sent."""
    monkeypatch.setenv("RAY_TMPDIR", str(ray_folder))
    monkeypatch.setenv("HOME", str(ray_folder))
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    return ray_folder
