"""The package list, found in the tree: ``voirdire/`` and its sub-packages, with ``agents/``, ``protocols/`` (every
protocol folder in it) and ``prompts/`` mapped into ``voirdire`` by pyproject.toml's ``package-dir``. Everything
else about the build is in pyproject.toml."""

from setuptools import find_packages, setup

setup(
    packages=[
        *find_packages(include=["voirdire", "voirdire.*"]),
        *(f"voirdire.{name}" for name in find_packages(include=["agents", "protocols", "protocols.*"])),
        "voirdire.prompt_files",
    ]
)
