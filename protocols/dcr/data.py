"""The benchmarks of §4.1, read from ``../shared/data`` (each folder's SOURCE.md says where they come from).

- ``summeval``: SummEval (Fabbri et al. 2021), 100 CNN/DM articles x 16 systems, expert consistency (mean of 3,
  1-5); reference = the article (DCR is reference-free, §1), the 11 reference summaries kept for ROUGE.
- ``qags-cnn``, ``qags-xsum``: QAGS (Wang et al. 2020), 235 and 239 summaries, the share of sentences judged
  supported; reference = the article (also ROUGE's, as no reference summaries exist).
- ``paws``: PAWS-Wiki labeled final dev (8,000 pairs), ``msrp``: MSR Paraphrase test (1,725 pairs); reference =
  the first sentence (§4.1 takes "question1" as the reference), label 1 = paraphrase.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from voirdire.kit import VoirdireError

from .items import DCRItem

DATA_ENV = "VOIRDIRE_DCR_DATA_DIR"
FILES = {
    "summeval": ("summeval", "summeval_bartscore.json"),
    "qags-cnn": ("qags", "qags_cnndm_bartscore.json"),
    "qags-xsum": ("qags", "qags_xsum_bartscore.json"),
    "paws": ("paraphrase", "paws_wiki_final_dev.tsv"),
    "msrp": ("paraphrase", "msr_paraphrase_test.txt"),
}
# How each benchmark's correlation is computed (§4.3): summary-level ρ/τ averaged over documents (SummEval, as
# UniEval and G-Eval compute it), sample-level r/ρ/τ (QAGS), AUROC of the binary label (paraphrase).
KIND = {"summeval": "summary", "qags-cnn": "sample", "qags-xsum": "sample", "paws": "binary", "msrp": "binary"}


class DataError(VoirdireError, ValueError):
    """A benchmark that cannot be found or read; the message names the file (and line)."""


class Example(BaseModel):
    """A DCR item with the references ROUGE scores it against (SummEval's 11 summaries, else the reference)."""

    item: DCRItem
    references: list[str]


def data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """``explicit``, ``$VOIRDIRE_DCR_DATA_DIR``, or ``shared/data`` beside or inside the repository or the cwd."""
    candidates: list[Path] = [Path(explicit)] if explicit is not None else []
    if os.environ.get(DATA_ENV):
        candidates.append(Path(os.environ[DATA_ENV]))
    repo = Path(__file__).resolve().parents[2]  # protocols/dcr/data.py -> repository root
    for base in (repo, Path.cwd()):
        candidates += [base.parent / "shared" / "data", base / "shared" / "data"]
    for c in candidates:
        if (c / "summeval").is_dir() or (c / "qags").is_dir() or (c / "paraphrase").is_dir():
            return c
    raise DataError(f"DCR benchmarks not found (set ${DATA_ENV}); looked in: {', '.join(map(str, candidates))}")


def path_of(name: str, root: str | os.PathLike[str] | None = None) -> Path:
    folder, file = FILES[name]
    return data_dir(root) / folder / file


def _json(path: Path) -> dict[str, dict]:  # type: ignore[type-arg]
    try:
        return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None


def load_summeval(path: Path) -> list[Example]:
    out = []
    for doc_id, doc in _json(path).items():
        for system, s in doc["sys_summs"].items():
            item = DCRItem(
                id=f"{doc_id}/{system}",
                reference=doc["src"],
                candidate=s["sys_summ"],
                task="summarization",
                human=float(s["scores"]["consistency"]),
                dataset="summeval",
                doc_id=doc_id,
                system=system,
            )
            out.append(Example(item=item, references=list(doc["ref_summs"])))
    return out


def _qags(name: str) -> Callable[[Path], list[Example]]:
    def load(path: Path) -> list[Example]:
        out = []
        for doc_id, doc in _json(path).items():
            s = doc["sys_summs"]["0"]
            item = DCRItem(
                id=f"{name}/{doc_id}",
                reference=doc["src"],
                candidate=s["sys_summ"],
                task="summarization",
                human=float(s["scores"]["fact"]),
                dataset=name,
                doc_id=doc_id,
            )
            out.append(Example(item=item, references=[doc["src"]]))
        return out

    return load


def _rows(path: Path, fields: int, skip_header: bool) -> list[tuple[int, list[str]]]:
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    rows = []
    for n, line in enumerate(lines, 1):
        if (skip_header and n == 1) or not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) != fields:
            raise DataError(f"{path}:{n}: expected {fields} tab-separated fields, got {len(cells)}")
        rows.append((n, cells))
    return rows


def load_paws(path: Path) -> list[Example]:
    out = []
    for _, (ident, s1, s2, label) in _rows(path, 4, skip_header=False):
        item = DCRItem(
            id=f"paws/{ident}", reference=s1, candidate=s2, task="semantic", human=float(label), dataset="paws"
        )
        out.append(Example(item=item, references=[s1]))
    return out


def load_msrp(path: Path) -> list[Example]:
    out = []
    for _, (quality, id1, id2, s1, s2) in _rows(path, 5, skip_header=True):
        item = DCRItem(
            id=f"msrp/{id1}-{id2}", reference=s1, candidate=s2, task="semantic", human=float(quality), dataset="msrp"
        )
        out.append(Example(item=item, references=[s1]))
    return out


LOADERS: dict[str, Callable[[Path], list[Example]]] = {
    "summeval": load_summeval,
    "qags-cnn": _qags("qags-cnn"),
    "qags-xsum": _qags("qags-xsum"),
    "paws": load_paws,
    "msrp": load_msrp,
}


def load_benchmark(name: str, root: str | os.PathLike[str] | None = None, path: Path | None = None) -> list[Example]:
    """One benchmark by name (``summeval``, ``qags-cnn``, ``qags-xsum``, ``paws``, ``msrp``), from ``path`` if given."""
    if name not in LOADERS:
        raise DataError(f"unknown benchmark {name!r}; expected one of {', '.join(LOADERS)}")
    return LOADERS[name](path or path_of(name, root))
