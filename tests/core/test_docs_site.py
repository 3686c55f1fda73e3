"""The documentation site: ``mkdocs build --strict`` passes (a broken link, a missing anchor, a page left out of the
navigation or an API name that no longer exists fails it), built into a temporary folder, never into the checkout;
the command-line reference covers every command; and no page names a commit (history lives in git)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from voirdire.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
# A commit named in prose: 7 to 40 hex digits with a letter and a digit, standing alone. An id inside a name
# (`claim-04851b35`, `popqa-9744af4f`, `sk-...-0123456789abcdef`) or a plain number is not one.
COMMIT = re.compile(r"(?<![\w\-@/.])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![\w\-])")


def hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cli_reference", DOCS / "hooks" / "cli_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_site_builds_strictly_outside_the_checkout(tmp_path: Path) -> None:
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings_handlers") is None:
        if os.environ.get("CI"):
            pytest.fail("mkdocs is not installed: make test installs the docs extra (pip install -e '.[docs]')")
        pytest.skip("the docs extra is not installed (pip install -e '.[docs]')")
    site = tmp_path / "site"
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "NO_MKDOCS_2_WARNING": "1"}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"), "-d", str(site)]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    cli = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    assert 'id="voirdire-examine"' in cli and "--max-errors" in cli
    api = (site / "reference" / "python" / "index.html").read_text(encoding="utf-8")
    assert "run_dataset" in api and "RunOptions" in api and "aexamine" in api
    assert not (ROOT / "site").exists() and not list((DOCS / "hooks").glob("__pycache__"))


def test_the_cli_reference_has_every_command_and_option() -> None:
    parser = build_parser()
    page = hook().render(parser)
    names = [name for name, _, _ in hook().commands(parser)]
    assert {"voirdire examine", "voirdire run dcr", "voirdire check-entities", "voirdire show"} <= set(names)
    for name in names:
        assert f"\n## {name}\n" in page, name
    # every option of every command is written once, in its command's section or in the shared ones it links to
    for _, _, sub in hook().commands(parser):
        for action in sub._actions:
            for flag in action.option_strings:
                if flag not in ("-h", "--help"):
                    assert f"`{flag}" in page, flag
    assert page.count("\n## Run options\n") == 1 and page.count("`--concurrency N`") == 1


def test_a_command_with_another_s_options_points_at_it() -> None:
    page = hook().render(build_parser())
    run_section = page.split("\n## voirdire run cross_examination\n", 1)[1].split("\n## ", 1)[0]
    assert "The same options as [`voirdire examine`](#voirdire-examine)." in run_section
    examine = page.split("\n## voirdire examine\n", 1)[1].split("\n## ", 1)[0]
    assert "`--majority`" in examine and "```text\nvoirdire examine [-h]" in examine


def test_no_docs_page_names_a_commit() -> None:
    found = [
        f"{page.relative_to(ROOT)}:{n}: {m.group()}"
        for page in sorted(DOCS.rglob("*.md"))
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        for m in COMMIT.finditer(line)
    ]
    assert not found, found


def test_the_commit_pattern() -> None:
    named = ["at `e36993b`, the", "the readers at 4fbca18.", "(HEAD 14e71c1)", "--version 22d6bcc=<dir>"]
    not_named = ["claim-04851b35", "popqa-9744af4f.jsonl", "sk-live-0123456789abcdef", "1000000000", "4382392@r1"]
    assert all(COMMIT.search(text) for text in named)
    assert not any(COMMIT.search(text) for text in not_named)
