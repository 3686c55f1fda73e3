"""``voirdire reproduce``: the papers' tables and figures that the installed protocols declare, listed and run.

Each protocol package lists its reproductions on its registration (``Registration.reproductions``, the types in
``voirdire.reports.paper_tables``); this module finds them through the registry, checks what one needs (a model for each
role it names), runs it, and prints the paper's numbers beside ours with the difference and the tolerance, writes
the outcome as JSON and draws the paper's figures where matplotlib is installed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from voirdire.base import mask_secrets, mask_tree, write_atomic
from voirdire.reports import Cell, Options, Outcome, Reproduction, ReproductionError

NEEDS = {
    "offline": "offline (data and code only)",
    "model": "a model: --model ROLE=SPEC",
    "gpu": "a model too large for a CPU: --model ROLE=SPEC on a GPU server",
}


def reproductions() -> dict[str, Reproduction]:
    """Every reproduction the installed protocols declare, by name (a package's registrations share them)."""
    from voirdire.registry import registrations

    found: dict[str, Reproduction] = {}
    for reg in registrations().values():
        for rep in getattr(reg, "reproductions", ()):
            found.setdefault(rep.name, rep)
    return found


def get(name: str) -> Reproduction:
    found = reproductions()
    if name not in found:
        raise ReproductionError(f"unknown reproduction {name!r}; see voirdire reproduce --list ({', '.join(found)})")
    return found[name]


def listing(found: Mapping[str, Reproduction] | None = None) -> str:
    """``voirdire reproduce --list``: name, paper, what it reproduces, what it needs, how long, the command."""
    found = found if found is not None else reproductions()
    lines = []
    for paper in dict.fromkeys(r.paper for r in found.values()):
        lines.append(paper)
        for r in (r for r in found.values() if r.paper == paper):
            needs = NEEDS[r.needs] + (f" for {', '.join(r.roles)}" if r.roles else "")
            lines.append(f"  {r.name:<26} {r.what}")
            lines.append(f"  {'':<26} needs: {needs}" + (f"; takes {r.takes}" if r.takes else ""))
            lines.append(f"  {'':<26} $ {r.command}")
            if r.needs != "offline":
                lines.append(f"  {'':<26} {r.tolerance}; the embedded model cannot stand in for the paper's")
        lines.append("")
    return "\n".join(lines).rstrip()


def check(rep: Reproduction, options: Options) -> None:
    """A reproduction that needs a model gets one for each of its roles (``*`` binds them all)."""
    if rep.needs == "offline":
        return
    missing = [r for r in rep.roles if r not in options.models and "*" not in options.models]
    if missing or not options.models:
        roles = ", ".join(missing or rep.roles) or "its roles"
        raise ReproductionError(
            f"--model: {rep.name} needs a model for {roles} (--model ROLE=SPEC, or --model '*=SPEC'); "
            f"e.g. {rep.command}"
        )


def run(rep: Reproduction, options: Options) -> tuple[Outcome, float]:
    check(rep, options)
    start = time.perf_counter()
    outcome = rep.run(options)
    return outcome, time.perf_counter() - start


def _num(x: float | None, wide: bool, sign: str = "") -> str:
    if x is None:
        return "–"
    return f"{x:{sign}.2f}" if wide else f"{x:{sign}.4f}"


def _mark(c: Cell) -> str:
    if c.within is None:
        return ""
    return "✓" if c.within else "✗"


def text(rep: Reproduction, outcome: Outcome, seconds: float | None = None) -> str:
    """The paper's numbers beside ours, with the difference, the tolerance and whether it holds."""
    width = max([len(c.label) for c in outcome.cells] + [10])
    head = f"{rep.name}: {rep.what}\n{rep.paper}" + (f" · {seconds:.1f} s" if seconds is not None else "")
    rows = [f"{'':<{width}}  {'paper':>9}  {'ours':>9}  {'diff':>9}  {'tol':>7}"]
    for c in outcome.cells:
        wide = any(x is not None and abs(x) >= 1.5 for x in (c.paper, c.ours))
        diff = _num(c.difference, wide, "+")
        tol = "–" if c.tolerance is None else f"{c.tolerance:g}"
        line = f"{c.label:<{width}}  {_num(c.paper, wide):>9}  {_num(c.ours, wide):>9}  {diff:>9}  {tol:>7}  {_mark(c)}"
        rows.append(line.rstrip() + (f"  ({c.note})" if c.note and c.note not in _shared_notes(outcome) else ""))
    judged = [c for c in outcome.cells if c.within is not None]
    summary = []
    if judged:
        summary.append(
            f"{sum(bool(c.within) for c in judged)} of {len(judged)} compared cells within tolerance ({rep.tolerance})"
        )
    elif rep.tolerance:
        summary.append(f"tolerance: {rep.tolerance}")
    if outcome.summary:
        summary.append(outcome.summary[0].upper() + outcome.summary[1:] + ".")
    shared = _shared_notes(outcome)
    return mask_secrets("\n".join([head, "", *rows, "", *summary, *shared, *outcome.notes]))


def _shared_notes(outcome: Outcome) -> list[str]:
    """A note every cell carries is printed once, below the table."""
    notes = {c.note for c in outcome.cells}
    return [n for n in notes if n] if len(notes) == 1 and len(outcome.cells) > 1 else []


def as_json(rep: Reproduction, outcome: Outcome, options: Options, seconds: float | None = None) -> dict[str, Any]:
    """What ``NAME.json`` holds (and ``--json`` prints), masked: a model's URL may carry a key (``?api_key=``)."""
    judged = [c for c in outcome.cells if c.within is not None]
    found: dict[str, Any] = {
        "name": rep.name,
        "paper": rep.paper,
        "what": rep.what,
        "needs": rep.needs,
        "tolerance": rep.tolerance,
        "models": dict(options.models),
        "seconds": None if seconds is None else round(seconds, 1),
        "within": sum(bool(c.within) for c in judged),
        "compared": len(judged),
        "cells": [c.as_dict() for c in outcome.cells],
        "summary": outcome.summary,
        "notes": outcome.notes,
        "figures": [chart.name for chart in outcome.charts],
        "details": outcome.details,
    }
    return mask_tree(found)  # type: ignore[no-any-return]


def write(
    rep: Reproduction,
    outcome: Outcome,
    options: Options,
    folder: Path,
    *,
    seconds: float | None = None,
    formats: tuple[str, ...] = ("svg",),
    figures: bool = True,
) -> tuple[Path, list[Path], str | None]:
    """``folder/NAME.json`` and the figures as ``folder/NAME-FIGURE.svg``; the paths, and why no figure was drawn
    (matplotlib missing) or None."""
    from voirdire.analysis.drawing import PlotsUnavailable, save
    from voirdire.reports import slug

    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ReproductionError(f"--out {folder}: cannot create the folder ({exc.strerror})") from None
    path = folder / f"{rep.name}.json"
    text = json.dumps(as_json(rep, outcome, options, seconds), indent=1, ensure_ascii=False) + "\n"
    write_atomic(path, text, "reproduce")  # whole or not at all: a full disk leaves no half-written JSON
    if not figures or not outcome.charts:
        return path, [], None
    from dataclasses import replace

    named = [replace(c, name=f"{rep.name}-{slug(c.name)}") for c in outcome.charts]
    try:
        return path, save(named, folder, formats), None
    except PlotsUnavailable as exc:
        return path, [], str(exc)
