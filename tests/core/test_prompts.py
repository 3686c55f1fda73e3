"""Prompt files: every file loads, declares exactly the variables it uses, and cites its source; a prompt marked
verbatim appears word for word in its paper (so a typo or an "improvement" cannot slip in)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from voirdire.session.prompts import PromptLibrary, default_root

ROOT = default_root()
FILES = sorted(ROOT.glob("*/*.yaml"))
PAPERS = {"cross_examination": "lm-vs-lm-cross-examination.txt"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_prompt_file_loads_and_cites_a_source(path: Path) -> None:
    prompt = PromptLibrary(ROOT).get(f"{path.parent.name}/{path.stem}")
    assert prompt.spec.source.strip()
    if not prompt.spec.verbatim:
        assert prompt.spec.note, "an adapted prompt says how it was adapted"


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


VERBATIM = [p for p in FILES if p.parent.name in PAPERS and yaml.safe_load(p.read_text(encoding="utf-8"))["verbatim"]]


@pytest.mark.parametrize("path", VERBATIM, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_verbatim_prompts_appear_in_the_paper(path: Path, shared_data: Path) -> None:
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    paper = _norm((shared_data.parent / "papers" / PAPERS[path.parent.name]).read_text(encoding="utf-8"))
    for message in spec["messages"]:
        for fragment in re.split(r"\{\w+\}", message["template"]):
            if fragment.strip():
                assert _norm(fragment) in paper, f"{path.name}: {fragment!r} is not in the paper"


def test_an_installed_wheel_finds_its_prompts(tmp_path: Path) -> None:
    """Built as a wheel, prompts/ ships as the data package voirdire.prompt_files and loads from site-packages. The
    wheel is built from a copy of the sources: a build in the checkout would rewrite its build/ and *.egg-info."""
    import shutil
    import subprocess
    import sys
    import zipfile

    repo = Path(__file__).resolve().parents[2]
    source = tmp_path / "source"
    junk = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist")
    for name in ("voirdire", "agents", "protocols", "prompts"):
        shutil.copytree(repo / name, source / name, ignore=junk)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(repo / name, source / name)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            str(source),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("voirdire-*.whl")
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    assert (site / "voirdire" / "prompt_files" / "cross_examination" / "decision.yaml").is_file()
    probe = (
        "from voirdire.session.prompts import default_root, library; "
        "print(default_root()); print(library().get('cross_examination/decision').spec.verbatim)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env={"PYTHONPATH": str(site)}, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(site / "voirdire" / "prompt_files"), "True"]
