"""Run the ``voirdire`` command of another checkout of this repository (a ``git worktree`` of an older commit), with
this interpreter and its packages:

    python -m bench.speed.checkout DIR examine --questions ...

The editable install maps ``voirdire``, ``voirdire.agents``, ``voirdire.protocols`` and ``voirdire.prompt_files`` to
this checkout's folders; here a finder put first maps them to DIR's instead, so every module of voirdire (the
protocols and agents included, which a PYTHONPATH entry alone would still take from this checkout) comes from DIR.
"""

from __future__ import annotations

import sys
from importlib.machinery import ModuleSpec, PathFinder
from importlib.util import spec_from_file_location
from pathlib import Path
from typing import Any


class CheckoutFinder:
    """voirdire's packages from ``root``'s folders, as the editable install maps them from its own."""

    def __init__(self, root: Path) -> None:
        self.mapping = {
            "voirdire": root / "voirdire",
            "voirdire.agents": root / "agents",
            "voirdire.protocols": root / "protocols",
            "voirdire.prompt_files": root / "prompts",
        }

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        folder = self.mapping.get(fullname)
        if folder is not None:
            init = folder / "__init__.py"
            if init.exists():
                return spec_from_file_location(fullname, init, submodule_search_locations=[str(folder)])
            spec = ModuleSpec(fullname, None, is_package=True)  # a namespace package (the prompt files)
            spec.submodule_search_locations = [str(folder)]
            return spec
        parent, _, _ = fullname.rpartition(".")
        if parent in self.mapping:
            return PathFinder.find_spec(fullname, [str(self.mapping[parent])])
        return None


def main() -> None:
    if len(sys.argv) < 2:
        raise SystemExit("usage: python -m bench.speed.checkout DIR [voirdire arguments]")
    root = Path(sys.argv[1]).resolve()
    if not (root / "voirdire" / "__init__.py").exists():
        raise SystemExit(f"{root}: not a checkout of voirdire (no voirdire/__init__.py)")
    sys.meta_path.insert(0, CheckoutFinder(root))
    sys.argv = ["voirdire", *sys.argv[2:]]
    from voirdire.cli import main as voirdire_main

    voirdire_main()


if __name__ == "__main__":
    main()
