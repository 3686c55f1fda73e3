"""voirdire as users install it: a wheel (and a wheel built from the sdist) made from a clean copy of the sources,
installed into a fresh virtual environment with no editable install, runs `voirdire list`, `examine` and `show`.

The wheel is built from a copy: a build in the checkout would write build/ and *.egg-info into it. The fresh
environment takes voirdire's dependencies from this interpreter's site-packages through a `.pth` line (Python
does not run `.pth` files found that way, so the checkout's editable install stays out of it): nothing is
downloaded, and the `voirdire` that runs is the one from the wheel.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.core.examination_scripts import scripted_models

REPO = Path(__file__).resolve().parents[2]
# Source folders and where pyproject.toml's package-dir puts them in the installed package.
FOLDERS = {"voirdire": "voirdire", "agents": "voirdire/agents", "protocols": "voirdire/protocols"}


def clean_copy(dest: Path) -> Path:
    junk = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist", "*.pyc")
    for name in ("voirdire", "agents", "protocols", "prompts"):
        shutil.copytree(REPO / name, dest / name, ignore=junk)
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(REPO / name, dest / name)
    return dest


def build_wheel(source: Path, out: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(out), str(source)],
        check=True,
        capture_output=True,
    )
    (wheel,) = out.glob("voirdire-*.whl")
    return wheel


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("wheel")
    source = clean_copy(root / "source")
    wheel = build_wheel(source, root / "dist")
    sdist_out = root / "sdist"
    subprocess.run(
        [sys.executable, "-c", f"from setuptools import build_meta; print(build_meta.build_sdist({str(sdist_out)!r}))"],
        cwd=source,
        check=True,
        capture_output=True,
    )
    (sdist,) = sdist_out.glob("voirdire-*.tar.gz")
    with tarfile.open(sdist) as tar:
        tar.extractall(root / "unpacked", filter="data")
    (unpacked,) = (root / "unpacked").iterdir()
    from_sdist = build_wheel(unpacked, root / "dist-from-sdist")
    return {"root": root, "wheel": wheel, "from_sdist": from_sdist}


def expected_inits() -> list[str]:
    """The ``__init__.py`` of every package folder of the sources, where the wheel must hold it."""
    out = []
    for folder, dest in FOLDERS.items():
        for init in sorted((REPO / folder).rglob("__init__.py")):
            rel = init.parent.relative_to(REPO / folder).as_posix()
            out.append(f"{dest}/{rel}/__init__.py" if rel != "." else f"{dest}/__init__.py")
    return out


def test_the_wheel_holds_every_package_and_its_data(built: dict[str, Path]) -> None:
    names = set(zipfile.ZipFile(built["wheel"]).namelist())
    missing = [init for init in expected_inits() if init not in names]
    assert not missing, f"packages missing from the wheel (setup.py finds packages by their __init__.py): {missing}"
    for data in ("voirdire/reports/prices.toml", "voirdire/prompt_files/cross_examination/decision.yaml",
                 "voirdire/web/templates/base.html"):  # fmt: skip
        assert data in names, data


def test_the_wheel_built_from_the_sdist_holds_the_same_files(built: dict[str, Path]) -> None:
    def files(wheel: Path) -> set[str]:
        return {n for n in zipfile.ZipFile(wheel).namelist() if ".dist-info/" not in n}

    assert files(built["from_sdist"]) == files(built["wheel"])


@pytest.mark.parametrize("which", ["wheel", "from_sdist"])
def test_an_installed_wheel_runs_list_examine_and_show(built: dict[str, Path], which: str, tmp_path: Path) -> None:
    env_dir = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True, capture_output=True)
    python = env_dir / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True, capture_output=True, text=True,
        ).stdout.strip()
    )  # fmt: skip
    # every site-packages folder this interpreter sees (a venv may itself reach another through a .pth line)
    folders = dict.fromkeys([sysconfig.get_paths()["purelib"], *(p for p in sys.path if p.endswith("site-packages"))])
    (site / "dependencies.pth").write_text("".join(f"{p}\n" for p in folders))
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(built[which])],
        check=True, capture_output=True,
    )  # fmt: skip
    work = tmp_path / "work"  # not the checkout: nothing may come from it
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["HF_HUB_OFFLINE"] = "1"
    voirdire = str(env_dir / "bin" / "voirdire")

    def run(*args: str) -> str:
        out = subprocess.run([voirdire, *args], cwd=work, env=env, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, f"voirdire {' '.join(args)}: {out.stderr[-2000:]}"
        return out.stdout

    where = subprocess.run(
        [str(python), "-c", "import voirdire, voirdire.cli; print(voirdire.__file__)"],
        cwd=work, env=env, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert where.startswith(str(site)), where
    listing = run("list")
    assert "cross_examination" in listing and "dcr" in listing
    models = scripted_models(work)
    transcript = work / "exam.jsonl"
    run("examine", "The capital of France is Paris.", "--model", f"examiner={models['examiner']}",
        "--model", f"examinee={models['examinee']}", "--out", str(transcript), "--no-progress")  # fmt: skip
    shown = run("show", str(transcript))
    assert "The claim is incorrect." in shown and "Where is it?" in shown
