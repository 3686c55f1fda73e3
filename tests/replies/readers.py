"""Each reader of the corpus, as a function of a corpus row: its value as a label, or "refuse".

``read`` uses the installed readers; ``readers_at`` builds the same table from the reader modules as a git commit
had them (``bench/reply_parsers_corpus.py --at``), to measure the readers before a change on the same corpus.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from voirdire.protocols.cross_examination import parsing as cross_examination
from voirdire.protocols.no_data import llm as no_data
from voirdire.protocols.oracle_checker import paraphrase as oracle_checker
from voirdire.protocols.qa_entailment import parsing as qa_entailment
from voirdire.protocols.qa_entailment.partial_marks import parse_explanation
from voirdire.session.protocol import ParseError

Table = dict[str, Callable[[dict[str, Any]], object]]
_SCALE_NAMES = ("difficulty", "closeness")


def table(cross: ModuleType, qa: ModuleType, oracle: ModuleType, nodata: ModuleType) -> Table:
    scales = {"difficulty": qa.DIFFICULTY_SCALE, "closeness": qa.CLOSENESS_SCALE, "none": None}

    def explanation(row: dict[str, Any]) -> object:
        value = parse_explanation(row["text"])
        return (
            value if type(value).__name__ == "ParseFailure" else f"{value.n_steps}/{value.n_info}/{value.n_assumption}"
        )  # type: ignore[union-attr]

    return {
        "decision": lambda r: cross.parse_decision(r["text"]),
        "yes_no": lambda r: "yes" if cross.parse_yes_no(r["text"]) else "no",
        "paraphrase": lambda r: oracle.read_yes_no(r["text"]).answer,
        "entailment": lambda r: qa.parse_entailment(r["text"]),
        "score": lambda r: qa.parse_score(r["text"], scale=scales[r["scale"]]),
        "statement": lambda r: qa.parse_statement(r["text"]),
        "explanation": explanation,
        "label": lambda r: nodata.parse_label(r["text"], r["x"]),
        "datapoint": lambda r: nodata.parse_datapoint(r["text"], x=r["x"]),
    }


CURRENT = table(cross_examination, qa_entailment, oracle_checker, no_data)


def read(row: dict[str, Any], readers: Table = CURRENT) -> str:
    try:
        value = readers[row["reader"]](row)
    except ParseError:
        return "refuse"
    return "refuse" if value is None or type(value).__name__ == "ParseFailure" else str(value)


def _module_at(root: Path, commit: str, path: str, package: str) -> ModuleType:
    """A module as ``commit`` had it; its relative imports resolve in the installed package."""
    source = subprocess.run(
        ["git", "-C", str(root), "show", f"{commit}:{path}"], check=True, capture_output=True, text=True
    ).stdout
    module = ModuleType(f"{package}._at_{commit[:8]}_{Path(path).stem}")
    module.__file__ = f"{commit[:8]}:{path}"
    module.__package__ = package
    sys.modules[module.__name__] = module
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


def readers_at(root: Path, commit: str) -> Table:
    pkg = "voirdire.protocols"
    return table(
        _module_at(root, commit, "protocols/cross_examination/parsing.py", f"{pkg}.cross_examination"),
        _module_at(root, commit, "protocols/qa_entailment/parsing.py", f"{pkg}.qa_entailment"),
        _module_at(root, commit, "protocols/oracle_checker/paraphrase.py", f"{pkg}.oracle_checker"),
        _module_at(root, commit, "protocols/no_data/llm.py", f"{pkg}.no_data"),
    )
