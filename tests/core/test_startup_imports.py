"""Start-up at the import floor: what `voirdire --help`, `voirdire list` and a run import, read from ``sys.modules``
of a fresh interpreter (never from a clock). The heavy libraries are imported where they are used: autogen's agents by
a session, numpy and scipy by the statistics and algorithms that need them, matplotlib by a chart, the viewer's web
stack by `voirdire view`, the local encoders (sentence-transformers, torch) by a protocol that embeds."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from voirdire.base import faces

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
print("\\nMODULES " + json.dumps(sorted(sys.modules)), file=sys.stderr)
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
# Nor by the two commands that only read the protocols' cards (`--help` and `list`): the model layer (autogen-core
# and what it brings: requests, PIL, OpenTelemetry, protobuf), the prompts' YAML and templates, the HTTP clients.
NOT_FOR_THE_TABLE = NOT_FOR_HELP | {
    "autogen_core",
    "langchain_core",
    "requests",
    "yaml",
    "PIL",
    "opentelemetry",
    "google",
    "jsonref",
    "aiohttp",
    "openai",
    "httpx",
    "multiprocessing",
}
# ... and of voirdire, no protocol's registration (its cards say what --help and list show), no transcript schema,
# no session, no runner beyond the options' defaults, no model client.
NOT_FOR_THE_TABLE_OF_VOIRDIRE = (
    "voirdire.protocols.cross_examination.registration",
    "voirdire.protocols.dcr.registration",
    "voirdire.protocols.no_data.registration",
    "voirdire.protocols.oracle_checker.registration",
    "voirdire.protocols.qa_entailment.registration",
    "voirdire.transcript.schema",
    "voirdire.session.protocol",
    "voirdire.runner.prepare",
    "voirdire.executors.base",
    "voirdire.models.base",
)
# A scripted examination needs autogen's agents (and its report statsmodels' intervals, which import pandas), but
# no chart, no local encoder and no viewer.
NOT_FOR_A_RUN = {"matplotlib", "sentence_transformers", "torch", "transformers", "uvicorn", "starlette"}


def imported_modules(args: list[str], cwd: Path) -> set[str]:
    """Every module `voirdire ARGS` imported, by its full name."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args)], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )
    marker = done.stderr.rpartition("\nMODULES ")[2]
    assert marker != done.stderr, done.stderr[-2000:]
    return set(json.loads(marker))


def imported(args: list[str], cwd: Path) -> set[str]:
    """The top-level packages `voirdire ARGS` imported."""
    return {m.split(".")[0] for m in imported_modules(args, cwd)}


@pytest.mark.parametrize("args", [["--help"], ["list"], ["examine", "--help"], ["run", "dcr", "--help"]])
def test_help_and_list_import_no_heavy_library(args: list[str], tmp_path: Path) -> None:
    modules = imported(args, tmp_path)
    assert "voirdire" in modules and "pydantic" in modules  # the probe ran the command
    assert modules & NOT_FOR_HELP == set()


@pytest.mark.parametrize("args", [["--help"], ["list"]])
def test_help_and_list_read_the_cards_alone(args: list[str], tmp_path: Path) -> None:
    """The command table and the protocols' list come from the cards: neither the model layer nor a protocol's
    registration is imported (nor the YAML of the prompts, nor an HTTP client)."""
    modules = imported_modules(args, tmp_path)
    tops = {m.split(".")[0] for m in modules}
    assert "voirdire.protocols.dcr.plugin" in modules  # the probe ran the command, and read the cards
    assert tops & NOT_FOR_THE_TABLE == set()
    assert [m for m in NOT_FOR_THE_TABLE_OF_VOIRDIRE if m in modules] == []


def test_a_protocol_command_imports_its_own_registration_only(tmp_path: Path) -> None:
    """`voirdire run dcr --help` fills dcr's parser when it is the command given: dcr's registration is imported,
    no other protocol's."""
    modules = imported_modules(["run", "dcr", "--help"], tmp_path)
    registered = {m for m in modules if m.startswith("voirdire.protocols.") and m.endswith(".registration")}
    assert registered == {"voirdire.protocols.dcr.registration"}


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
    caches = (plugins._entry_points, plugins._entry_point_cards, plugins.registrations, plugins.command_plugins)
    for cached in caches:
        cached.cache_clear()
    try:
        assert "dcr" in plugins.registrations()
        assert plugins.command_plugins()
    finally:
        for cached in caches:
            cached.cache_clear()
    assert calls == [{}]


def test_a_lazy_kit_name_resolves_and_an_unknown_one_fails() -> None:
    import voirdire.kit as kit
    import voirdire.kit.models as models
    import voirdire.kit.reports as reports
    import voirdire.kit.runs as runs

    assert kit.Protocol is not None
    for face, name in ((models, "FunctionAgent"), (runs, "run_in_memory"), (runs, "arun"), (runs, "stage"),
                       (reports, "wilson")):  # fmt: skip
        assert getattr(face, name) is not None
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = kit.no_such_name
    with pytest.raises(AttributeError, match="wilson"):
        _ = kit.wilson  # a sub-face's name is not the top level's


def test_every_card_says_what_its_registration_says() -> None:
    """A card is data written beside its registration: importing the registration checks that the two agree, and
    every installed protocol's does."""
    from voirdire.registry import plugins

    for name, card in plugins._entry_point_cards().items():
        reg = card.load()
        assert reg.name == name and plugins._said(card) == plugins._said(plugins.Card.of(reg))


def test_a_card_that_differs_from_its_registration_is_refused() -> None:
    from voirdire.registry import Card, plugins

    dcr = plugins._entry_point_cards()["dcr"]
    wrong = Card(name="dcr", target=dcr.target, roles=("judge",), paper=dcr.paper, command=dcr.command, help=dcr.help)
    with pytest.raises(plugins.RegistryError, match=r"^protocol plugin 'dcr': its card and its registration .* roles$"):
        wrong.load()
    a_card = Card(name="dcr", target="voirdire.protocols.dcr.plugin:dcr", roles=dcr.roles)  # names a card, not one
    with pytest.raises(plugins.RegistryError, match="is not a voirdire Registration"):
        a_card.load()
    missing = Card(name="dcr", target="voirdire.protocols.dcr.no_such_module:dcr", roles=dcr.roles)
    with pytest.raises(plugins.RegistryError, match="cannot be loaded"):
        missing.load()


LAZY_FACES = [
    "voirdire.agents", "voirdire.analysis", "voirdire.certificate", "voirdire.chat", "voirdire.executors",
    "voirdire.kit", "voirdire.kit.budget", "voirdire.kit.charts", "voirdire.kit.cli", "voirdire.kit.data",
    "voirdire.kit.models", "voirdire.kit.replies", "voirdire.kit.reports", "voirdire.kit.reproduce",
    "voirdire.kit.runs", "voirdire.models", "voirdire.registry", "voirdire.reports", "voirdire.runner",
    "voirdire.session", "voirdire.transcript", "voirdire.web", "voirdire.protocols.cross_examination",
    "voirdire.protocols.dcr", "voirdire.protocols.no_data", "voirdire.protocols.oracle_checker",
    "voirdire.protocols.qa_entailment",
]  # fmt: skip


@pytest.mark.parametrize("face", LAZY_FACES)
def test_a_lazy_face_lists_resolves_and_documents_every_export(face: str) -> None:
    """Each export is declared once (a re-export under TYPE_CHECKING): ``__all__`` names it, ``dir()`` lists it (so
    completion finds it), and it resolves to the name, not to a submodule of the same name."""
    package = importlib.import_module(face)
    declared = faces.declared_exports(Path(package.__file__).read_text(encoding="utf-8"), face)  # type: ignore[arg-type]
    assert declared and set(declared) <= set(package.__all__) <= set(dir(package))
    for name in package.__all__:
        value = getattr(package, name)
        assert not isinstance(value, types.ModuleType) or name not in declared, name


def test_only_a_re_export_is_an_export() -> None:
    """``X as X`` under TYPE_CHECKING exports X; a plain import there is the face's own annotation; a relative
    re-export names its package's module."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from voirdire.reports.fold import Report as Report, report_file\n"
        "    from .amc import alpha_beta as alpha_beta\n"
        "from os.path import join as join\n"
    )
    assert faces.declared_exports(source, "voirdire.protocols.dcr") == {
        "Report": "voirdire.reports.fold",
        "alpha_beta": "voirdire.protocols.dcr.amc",
    }


def test_help_documents_the_kit_and_dir_lists_the_protocols_calls() -> None:
    import pydoc

    import voirdire
    import voirdire.kit

    text = pydoc.render_doc(voirdire.kit, renderer=pydoc.plaintext)
    assert "class Protocol(" in text and "class Session(" in text
    assert {"examine", "examine_dataset", "run", "load"} <= set(dir(voirdire))


@pytest.mark.parametrize("jedi", [True, False])
def test_a_jupyter_kernel_completes_the_package_s_calls(jedi: bool) -> None:
    """IPython's completer in a real kernel, with jedi and without: ``voirdire.exa`` completes to ``examine`` and
    ``voirdire.kit.Proto`` to ``Protocol``."""
    jupyter_client = pytest.importorskip("jupyter_client")
    manager, client = jupyter_client.manager.start_new_kernel(kernel_name="python3")
    try:
        client.execute_interactive(f"%config IPCompleter.use_jedi = {jedi}\nimport voirdire, voirdire.kit", timeout=120)
        for code, expected in (("voirdire.exa", "voirdire.examine"), ("voirdire.kit.Proto", "voirdire.kit.Protocol")):
            msg_id = client.complete(code, len(code))
            reply = client.get_shell_msg(timeout=120)
            while reply["parent_header"].get("msg_id") != msg_id:
                reply = client.get_shell_msg(timeout=120)
            content = reply["content"]
            found = {code[: content["cursor_start"]] + m for m in content["matches"]}
            assert expected in found, (code, content["matches"])
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def test_a_face_keeps_its_name_over_a_submodule_of_the_same_name() -> None:
    """``reports.stability`` is a function of the module ``reports/stability.py``: importing the module after the
    face does not replace the function."""
    import voirdire.reports
    import voirdire.reports.stability  # the module, imported after the face

    module = sys.modules["voirdire.reports.stability"]
    assert isinstance(module, types.ModuleType)
    assert voirdire.reports.stability is module.stability


def test_a_registration_that_cannot_be_imported_is_one_line_when_its_command_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A card is shown by --help; its registration is imported when its command is given, and a broken one is the
    usual one-line plugin error there (exit 2), not a traceback."""
    from voirdire import registry
    from voirdire.cli import main
    from voirdire.registry import Card, plugins

    broken = Card(name="broken", target="voirdire.protocols.no_such_module:broken", roles=("judge",), help="a test")
    monkeypatch.setattr(plugins, "_entry_point_cards", lambda: {"broken": broken})
    for module in (registry, plugins):  # the face and the module (the other protocol packages' commands)
        monkeypatch.setattr(module, "command_plugins", lambda: ())
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert "broken" in capsys.readouterr().out  # listed from its card
    assert main(["run", "broken", "--item", "{}"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("voirdire: error: protocol plugin 'broken' (voirdire.protocols.no_such")
    assert "cannot be loaded" in err[0]
