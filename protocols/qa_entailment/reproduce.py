"""The EVOUNA rows of Table 1 that ``voirdire reproduce`` runs: Lexical Match (offline, every cell within 0.1) and
the entailment evaluator (a model plays the evaluator; the paper's numbers are gpt-3.5-turbo-1106's, App. A)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from voirdire.kit import VoirdireError
from voirdire.kit.charts import BarChart, Series
from voirdire.kit.reproduce import Cell, Options, Outcome, Reproduction, model_args, paper_models_note, run_voirdire

from .data import EVOUNA_SYSTEM_NAMES, EVOUNA_SYSTEMS, load_evouna
from .report import QAReport
from .scoring import f1_judgments, lexical_judgments, system_reports

PAPER = "Accurate and Nuanced Open-QA Evaluation Through Textual Entailment (Yao, Barbosa)"
# Table 1 as printed: (F1, Acc) per system in EVOUNA_SYSTEMS order.
LEXICAL = {
    "NQ": [(92.0, 89.7), (86.9, 84.8), (85.0, 80.3), (87.6, 82.5), (87.8, 82.3)],
    "TQ": [(91.8, 94.7), (94.8, 92.3), (95.2, 92.3), (94.8, 91.1), (94.1, 89.8)],
}
ENTAILMENT = {
    "NQ": [(94.8, 92.5), (92.7, 90.2), (92.6, 88.9), (93.8, 90.1), (92.6, 88.1)],
    "TQ": [(96.8, 94.7), (96.6, 94.2), (96.6, 94.2), (97.4, 95.3), (95.9, 92.5)],
}
TOLERANCE = 0.1  # percentage points: the table prints one decimal
TRANSPOSED = ("TQ", "fid")  # printed F1 and Acc swapped (docs/qa_entailment.md: arithmetically impossible as printed)


def evouna_dir(options: Options) -> Path:
    """``--data-dir`` (the folder holding ``evouna/`` or the EVOUNA files), else ``shared/data/evouna`` by the
    repository or the current folder."""
    repo = Path(__file__).resolve().parents[2]
    bases = [options.data_dir] if options.data_dir is not None else []
    if os.environ.get("VOIRDIRE_EVOUNA_DIR"):
        bases.append(Path(os.environ["VOIRDIRE_EVOUNA_DIR"]))
    bases += [b / "shared" / "data" for b in (repo.parent, repo, Path.cwd().parent, Path.cwd())]
    for base in bases:
        for folder in (base, base / "evouna"):
            if (folder / "NQ.json").is_file() and (folder / "TQ.json").is_file():
                return folder
    raise VoirdireError(f"--data-dir: EVOUNA's NQ.json and TQ.json not found; looked in {', '.join(map(str, bases))}")


def _chart(name: str, title: str, ours: dict[str, float], paper: dict[str, float]) -> BarChart:
    keys = tuple(ours)
    return BarChart(
        name, title, "system", "F1 (%)", keys,
        (Series("paper", tuple(paper[k] for k in keys)), Series("ours", tuple(ours[k] for k in keys))),
        ylim=(50, 100),
    )  # fmt: skip


def lexical(options: Options) -> Outcome:
    folder = evouna_dir(options)
    out = Outcome(details={"data": str(folder), "tolerance_pp": TOLERANCE, "datasets": {}})
    for dataset, printed in LEXICAL.items():
        items = load_evouna(folder / f"{dataset}.json")
        reports = system_reports(items, lexical_judgments(items))
        token = system_reports(items, f1_judgments(items))
        ours_f1, paper_f1 = {}, {}
        rows: list[dict[str, Any]] = []
        for system, (pf1, pacc) in zip(EVOUNA_SYSTEMS, printed, strict=True):
            s = reports[system].scores
            assert s is not None  # every EVOUNA system has human judgments
            name = EVOUNA_SYSTEM_NAMES[system]
            f1, acc = round(100 * s.f1, 1), round(100 * s.accuracy, 1)
            note = ""
            if (dataset, system) == TRANSPOSED:
                pf1, pacc = pacc, pf1
                note = "printed transposed (F1 ↔ Acc); compared the other way round"
            out.cells += [
                Cell(f"EVOUNA-{dataset} {name} F1", pf1, f1, TOLERANCE, note),
                Cell(f"EVOUNA-{dataset} {name} Acc", pacc, acc, TOLERANCE, note),
            ]
            ours_f1[name], paper_f1[name] = f1, pf1
            tok = token[system].scores
            rows.append(
                {"system": system, "n": s.n, "tp": s.tp, "fp": s.fp, "fn": s.fn, "tn": s.tn,
                 "f1": 100 * s.f1, "acc": 100 * s.accuracy,
                 "token_f1_evaluator": {"f1": 100 * tok.f1, "acc": 100 * tok.accuracy} if tok else None}
            )  # fmt: skip
        out.details["datasets"][dataset] = rows
        out.charts.append(
            _chart(
                f"table1-lexical-{dataset.lower()}",
                f"Table 1, Lexical Match on EVOUNA-{dataset}: F1 per system",
                ours_f1,
                paper_f1,
            )
        )
    out.notes.append("Ours rounded to one decimal as the paper prints; unrounded values and counts in the JSON.")
    return out


def entailment(options: Options) -> Outcome:
    folder = evouna_dir(options)
    limit = options.limit or 20
    out = Outcome(notes=[paper_models_note("gpt-3.5-turbo-1106 (seed 42, temperature 0, max_tokens 300)", options)])
    work = options.out or Path(tempfile.mkdtemp(prefix="voirdire-reproduce-"))
    for dataset in ("NQ",):
        transcript = work / f"evouna-{dataset.lower()}-entailment.jsonl"
        run_voirdire(options, ["qa-eval", "--data", str(folder / f"{dataset}.json"), "--evaluator", "entailment",
             "--limit", str(limit), "--out", str(transcript), "--fresh", *model_args(options)]
        )  # fmt: skip
        report = _report(transcript)
        for system, (pf1, pacc) in zip(EVOUNA_SYSTEMS, ENTAILMENT[dataset], strict=True):
            ev = report.systems.get(system)
            s = ev.scores if ev else None
            name = EVOUNA_SYSTEM_NAMES[system]
            out.cells += [
                Cell(f"EVOUNA-{dataset} {name} F1", pf1, None if s is None else round(100 * s.f1, 1)),
                Cell(f"EVOUNA-{dataset} {name} Acc", pacc, None if s is None else round(100 * s.accuracy, 1)),
            ]
        out.details[dataset] = {"transcript": str(transcript), "items": limit}
    out.notes.append(f"The first {limit} questions of EVOUNA-NQ (--limit); the paper grades all 3,020.")
    return out


def _report(transcript: Path) -> QAReport:
    from voirdire.kit.reports import report_file

    from .report import report

    r, _ = report_file(transcript, report)
    assert isinstance(r, QAReport)
    return r


REPRODUCTIONS = (
    Reproduction(
        "evouna-table1-lexical",
        PAPER,
        "Table 1, Lexical Match rows (EVOUNA-NQ and -TQ, F1 and Acc per system)",
        "offline",
        lexical,
        tolerance=f"±{TOLERANCE} pp (one printed decimal)",
        takes="about 5 s",
    ),
    Reproduction(
        "evouna-table1-entailment",
        PAPER,
        "Table 1, Entailment row on EVOUNA-NQ (F1 and Acc per system)",
        "model",
        entailment,
        tolerance="not judged: the paper's numbers are gpt-3.5-turbo-1106's",
        roles=("evaluator",),
        takes="minutes per 20 questions with a remote model",
        example="voirdire reproduce evouna-table1-entailment --model evaluator=openai:gpt-3.5-turbo-1106 --limit 100",
    ),
)
