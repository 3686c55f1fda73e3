from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# pytest-xdist's workers inherit COLUMNS=80/LINES=24, which the terminal chat reads as the terminal's width; a test
# run in one process has none. The tests that check a width set COLUMNS themselves.
os.environ.pop("COLUMNS", None)
os.environ.pop("LINES", None)
SHARED = Path(__file__).resolve().parent.parent.parent / "shared"


@pytest.fixture
def shared_data() -> Path:
    path = SHARED / "data"
    if not path.is_dir():
        pytest.skip("../shared/data is not beside this checkout")
    return path


def registry_leak() -> str | None:
    """What a test left in the protocol registry's cache, or None. ``registrations`` is ``functools.cache``d for the
    process: a test that replaces what it reads (``_entry_point_cards``) and calls it leaves its fake protocols
    cached for every later test of the worker, where replacing ``registrations`` itself (as its docstring says) is
    undone with the test. A leak found is cleared."""
    plugins = sys.modules.get("voirdire.registry.plugins")
    if plugins is None or plugins.registrations is not plugins._INSTALLED:  # not imported, or replaced right now
        return None
    if not plugins.registrations.cache_info().currsize:
        return None
    cached = plugins.registrations()
    cards = plugins._entry_point_cards()
    if cached.keys() == cards.keys() and all(cached[name] is card.load() for name, card in cards.items()):
        return None
    plugins.registrations.cache_clear()
    return (
        f"the registry's cache held {sorted(cached)} where the installed protocols are {sorted(cards)}: replace "
        "voirdire.registry.plugins.registrations in a test, not what it reads (cleared)"
    )


@pytest.fixture(autouse=True)
def _registry_left_as_found() -> Iterator[None]:
    yield
    if (leak := registry_leak()) is not None:
        pytest.fail(leak)


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


# Under pytest-xdist (`make test` runs `-n 3 --dist loadgroup`): tests that share an expensive per-process thing run
# on one worker, so it is built once, not once per worker. A group name per shared thing:
# - "ray": a local Ray instance (dozens of processes; Ray keeps its first instance's folder for the process);
# - "embedded-model": the embedded llama.cpp model and the sentence encoders (loaded once per process);
# - "web-transcripts"/"chart-transcripts": the session fixtures writing every protocol's transcripts (about a
#   minute each on two cores) and the one headless chromium of the viewer's tests;
# - "phoenix": the Arize Phoenix server the OpenTelemetry tests send to (a minute to start).
_SHARED_FIXTURES = {
    "ray_home": "ray",
    "browser": "web-transcripts",
    "phoenix": "phoenix",
}
# Tests that run for tens of seconds each (a wheel built and installed, every README and docs command, subprocess
# workers): started first, so they are not the last ones a worker starts while the others are already idle.
_LONG_FIRST = (
    "tests/core/test_readme.py",
    "tests/core/test_docs_commands.py",
    "tests/core/test_wheel.py",
    "tests/core/test_plugin.py",
    "tests/core/test_workers.py",
    "tests/core/test_ray_executor.py",
    "tests/core/test_node_loss.py",
    "tests/core/test_report.py",
    "tests/core/test_parser_fuzz.py",
    "tests/core/test_full_disk_workers.py",
    "tests/core/test_main_module.py",
    "tests/core/test_live.py",
    "tests/core/test_prompts.py",
    "tests/web/test_review_terminal.py",
)


def _group(item: pytest.Item) -> str | None:
    path = item.nodeid.split("::", 1)[0]
    names = set(getattr(item, "fixturenames", ()))
    for fixture, group in _SHARED_FIXTURES.items():
        if fixture in names:
            return group
    if path.startswith("tests/web/") and names & {"transcripts", "viewer"}:
        return "web-transcripts"
    if path.startswith("tests/charts/") and "transcripts" in names:
        return "chart-transcripts"
    if item.get_closest_marker("slow") is not None or path == "tests/models/test_llama.py":
        return "embedded-model"
    return None


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups off the items
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.pluginmanager.hasplugin("xdist"):  # the marker is xdist's; without it the groups mean nothing
        for item in items:
            group = _group(item)
            if group is not None:
                item.add_marker(pytest.mark.xdist_group(group))
    rank = {path: i for i, path in enumerate(_LONG_FIRST)}
    # A stable sort: each file's tests keep their order (and their module fixtures), the long files go first.
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))
