"""voirdire: LLM agents that examine, prove and verify each other's answers before anyone trusts them.

Scripts use the same pieces as the CLI::

    import voirdire
    verdict = voirdire.examine("The capital of Eritrea is Asmara.", models={"examiner": "openai:gpt-4o-mini"})
    transcript = voirdire.load("transcripts/examine-....jsonl")   # .sessions_frame(), .turns_frame(), ...

Inside a running event loop (Jupyter, async code) the synchronous calls wait for the run in a worker thread; the
async forms do not block the loop: ``await voirdire.aexamine(...)``, ``arun``, ``arun_dataset``,
``aexamine_dataset`` (see ``voirdire.api``). ``examine`` and its forms are
cross-examination's, added by its registration (``Registration.api``) like any protocol's own calls.
"""

from __future__ import annotations

from typing import Any

from voirdire.base import set_html_renderer

__version__ = "0.1.0"

_API = {
    "run": "voirdire.api",
    "arun": "voirdire.api",
    "run_dataset": "voirdire.api",
    "arun_dataset": "voirdire.api",
    "run_protocol": "voirdire.runner",
    "RunOptions": "voirdire.runner",
    "load_transcript": "voirdire.api",
    "load": "voirdire.api",
    "RoleSettings": "voirdire.models",
}

__all__ = sorted(_API)


def _html(obj: object) -> str | None:
    """What a Jupyter cell shows for a session, a run, a report or a comparison (``_repr_html_``): drawn by the
    viewer's templates, imported at the first such display only."""
    from voirdire.web import html_of

    return html_of(obj)


set_html_renderer(_html)


def __dir__() -> list[str]:
    """What completion and ``dir()`` see: the names above and those the registered protocols add."""
    from voirdire.registry import api_names

    return sorted({*globals(), *_API, *api_names()})


def __getattr__(name: str) -> Any:  # lazy: importing voirdire stays cheap and free of import cycles
    import importlib
    import importlib.util

    if name in _API:
        return getattr(importlib.import_module(_API[name]), name)
    if importlib.util.find_spec(f"voirdire.{name}") is not None:  # `from voirdire import registry`: the package,
        return importlib.import_module(f"voirdire.{name}")  # never a protocol's (which would import every protocol)
    if not name.startswith("_"):  # what a registered protocol adds (Registration.api): voirdire.examine, ...
        found = importlib.import_module("voirdire.registry").api_function(name)
        if found is not None:
            return found
    raise AttributeError(f"module 'voirdire' has no attribute {name!r}")
