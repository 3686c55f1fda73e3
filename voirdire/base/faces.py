"""Lazy package faces (PEP 562): a package's ``__init__.py`` names what it exports and the module each name comes
from, and a name's module is imported at the first use of the name, not when the package is imported. So
``voirdire --help`` and ``voirdire list`` import the modules they use and not the rest of a package's face.

A face declares its names twice on purpose: under ``TYPE_CHECKING`` (what type checkers and readers see, and what
the layer checks read) and in the table given here (what runs); tests/core/test_startup_imports.py checks that both
name the same things.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any

EXPORTS = "__face_exports__"


class Face(types.ModuleType):
    """A lazy face's module. Importing a submodule binds it as an attribute of its package; where the face exports
    a name that is also a submodule's (``reports.stability``, the function, from ``reports/stability.py``), the
    exported name wins, as it does in a face that imports its names eagerly."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and name in self.__dict__.get(EXPORTS, ()):
            return
        super().__setattr__(name, value)


def lazy_face(package: str, table: Mapping[str, Sequence[str]]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package``'s face: ``table`` maps each module to the names the face exports from it."""
    where = {name: module for module, names in table.items() for name in names}
    pkg = sys.modules[package]
    pkg.__class__ = Face
    setattr(pkg, EXPORTS, frozenset(where))

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(pkg, name, value)
        return value

    return __getattr__
