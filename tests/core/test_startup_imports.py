"""Start-up at the import floor: what `voirdire --help`, `voirdire list` and a run import, read from ``sys.modules``
of a fresh interpreter (never from a clock). The heavy libraries are imported where they are used: autogen's agents by
a session, numpy and scipy by the statistics and algorithms that need them, matplotlib by a chart, the viewer's web
stack by `voirdire view`, the local encoders (sentence-transformers, torch) by a protocol that embeds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .examination_scripts import scripted_models

# Run `voirdire ARGS` as `python -m voirdire ARGS` would, then print the top-level modules it imported.
PROBE = """
import json, runpy, sys
sys.argv = ["voirdire", *json.loads(sys.argv[1])]
try:
    runpy.run_module("voirdire", run_name="__main__", alter_sys=True)
except SystemExit:
    pass
sys.stdout.flush()
print("\\nMODULES " + json.dumps(sorted({m.split(".")[0] for m in sys.modules})), file=sys.stderr)
"""

# Never imported by a command that only lists or explains: the charts, the array stack, the local encoders, the
# viewer's web stack, autogen's agents (a session's), the data frames, the terminal's rich text (a chat's, a progress
# line's: imported by the command that prints one), the MCP server.
NOT_FOR_HELP = {
    "rich",
    "mcp",
    "autogen_agentchat",
    "numpy",
    "scipy",
    "pandas",
    "matplotlib",
    "sentence_transformers",
    "torch",
    "transformers",
    "sklearn",
    "statsmodels",
    "pyarrow",
    "uvicorn",
    "starlette",
    "jinja2",
}
# A scripted examination needs autogen's agents (and its report statsmodels' intervals, which import pandas), but
# no chart, no local encoder and no viewer.
NOT_FOR_A_RUN = {"matplotlib", "sentence_transformers", "torch", "transformers", "uvicorn", "starlette"}


def imported(args: list[str], cwd: Path) -> set[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args)], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )
    marker = done.stderr.rpartition("\nMODULES ")[2]
    assert marker != done.stderr, done.stderr[-2000:]
    return set(json.loads(marker))


@pytest.mark.parametrize("args", [["--help"], ["list"], ["examine", "--help"], ["run", "dcr", "--help"]])
def test_help_and_list_import_no_heavy_library(args: list[str], tmp_path: Path) -> None:
    modules = imported(args, tmp_path)
    assert "voirdire" in modules and "pydantic" in modules  # the probe ran the command
    assert modules & NOT_FOR_HELP == set()


def test_a_scripted_run_imports_what_it_uses_only(tmp_path: Path) -> None:
    models = [arg for role, spec in scripted_models(tmp_path).items() for arg in ("--model", f"{role}={spec}")]
    out = tmp_path / "run.jsonl"
    modules = imported(["examine", "Paris is the capital of France.", *models, "--out", str(out)], tmp_path)
    assert out.is_file()  # the run happened: its session is in the transcript
    assert "autogen_agentchat" in modules
    assert modules & NOT_FOR_A_RUN == set()


def test_the_commands_that_print_a_chat_still_find_it(tmp_path: Path) -> None:
    """The chat's imports moved into the commands that print: `show` renders a session with them."""
    models = [arg for role, spec in scripted_models(tmp_path).items() for arg in ("--model", f"{role}={spec}")]
    out = tmp_path / "run.jsonl"
    imported(["examine", "Paris is the capital of France.", *models, "--out", str(out)], tmp_path)
    modules = imported(["show", str(out)], tmp_path)
    assert "rich" in modules


def test_entry_points_are_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The protocols' and the commands' groups come from one scan of the installed distributions."""
    import importlib.metadata

    from voirdire.registry import plugins

    calls: list[dict[str, object]] = []
    real = importlib.metadata.entry_points

    def counted(**kwargs: object) -> importlib.metadata.EntryPoints:
        calls.append(kwargs)
        return real(**kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(importlib.metadata, "entry_points", counted)
    for cached in (plugins._entry_points, plugins.registrations, plugins.command_plugins):
        cached.cache_clear()
    try:
        assert "dcr" in plugins.registrations()
        assert plugins.command_plugins()
    finally:
        for cached in (plugins._entry_points, plugins.registrations, plugins.command_plugins):
            cached.cache_clear()
    assert calls == [{}]


def test_a_lazy_kit_name_resolves_and_an_unknown_one_fails() -> None:
    import voirdire.kit as kit

    for name in ("FunctionAgent", "run_in_memory", "arun", "stage", "wilson"):
        assert getattr(kit, name) is not None
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = kit.no_such_name
