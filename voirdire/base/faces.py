"""Lazy package faces (PEP 562): a name's module is imported at the first use of the name, not when its package is
imported, so ``voirdire --help`` and ``voirdire list`` import only the modules they use.

A face declares each export once, as a re-export under ``TYPE_CHECKING`` in its ``__init__.py``::

    if TYPE_CHECKING:
        from voirdire.reports.report import Report as Report

    __getattr__, __dir__, __all__ = lazy_face(__name__)

Type checkers and readers see the imports (``X as X`` is PEP 484's explicit re-export); at run time ``lazy_face``
reads the same lines and gives the module its ``__getattr__``, its ``__dir__`` (so ``dir()``, tab completion and
``help()`` see every export) and its ``__all__``. A plain import under ``TYPE_CHECKING`` is the face's own
annotation, not an export.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
import types
from collections.abc import Callable
from pathlib import Path
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


def declared_exports(source: str, package: str) -> dict[str, str]:
    """The names a face's source re-exports under ``TYPE_CHECKING`` (``from M import X as X``), each with its
    module."""
    where: dict[str, str] = {}
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING"):
            continue
        for stmt in node.body:
            if isinstance(stmt, ast.ImportFrom):
                module = importlib.util.resolve_name("." * stmt.level + (stmt.module or ""), package)
                where.update({a.name: module for a in stmt.names if a.asname == a.name})
    return where


def lazy_face(package: str) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``package``'s ``__getattr__``, ``__dir__`` and ``__all__``, from the re-exports its ``__init__.py`` declares."""
    pkg = sys.modules[package]
    where = declared_exports(Path(str(pkg.__file__)).read_text(encoding="utf-8"), package)
    pkg.__class__ = Face
    setattr(pkg, EXPORTS, frozenset(where))

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(pkg, name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(pkg.__dict__) | set(where))

    return __getattr__, __dir__, sorted(where)
