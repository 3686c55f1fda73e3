"""LMvLM's tables that ``voirdire reproduce`` runs with a model: Table 4's PopQA columns (precision, recall and F1
of rejecting incorrect claims) and Table 8's examination statistics; the paper's numbers are ChatGPT's as both
examiner and examinee (§4.1)."""

from __future__ import annotations

import os
import tempfile
from dataclasses import replace
from pathlib import Path

from voirdire.kit import VoirdireError
from voirdire.kit.reports import slug
from voirdire.kit.reproduce import Cell, Options, Outcome, Reproduction, model_args, paper_models_note, run_voirdire

from .charts import charts as lmvlm_charts
from .scoring import Report

PAPER = "LM vs LM: Detecting Factual Errors via Cross Examination (Cohen et al.)"
TABLE4_POPQA = {"LMvLM": (83.6, 77.1, 80.2), "LMvLM (Majority)": (87.0, 84.0, 85.4)}  # P, R, F1; ChatGPT/ChatGPT
TABLE8 = {  # ChatGPT/ChatGPT column: mean (sd)
    "questions": (7.0, 2.8),
    "followup_questions_per_iteration": (1.3, 1.0),
    "followup_iterations": (1.9, 1.2),
    "questions_per_iteration": (3.1, 2.1),
}
TABLE8_INCONCLUSIVE = 14.8
PAPER_MODELS = "ChatGPT (gpt-3.5-turbo, 2023) as examiner and examinee"


def popqa(options: Options) -> Path:
    repo = Path(__file__).resolve().parents[2]
    bases = [options.data_dir] if options.data_dir is not None else []
    if os.environ.get("VOIRDIRE_POPQA"):
        return Path(os.environ["VOIRDIRE_POPQA"])
    bases += [b / "shared" / "data" for b in (repo.parent, repo, Path.cwd().parent, Path.cwd())]
    for base in bases:
        for path in (base / "popqa_longtail_merged.jsonl", base / "popqa" / "popqa_longtail_merged.jsonl"):
            if path.is_file():
                return path
    raise VoirdireError(
        f"--data-dir: popqa/popqa_longtail_merged.jsonl not found; looked in {', '.join(map(str, bases))}"
    )


def _run(options: Options, majority: bool) -> Report:
    from voirdire.kit.reports import report_file

    from .scoring import report

    limit = options.limit or 20
    work = options.out or Path(tempfile.mkdtemp(prefix="voirdire-reproduce-"))
    transcript = work / f"lmvlm-popqa{'-majority' if majority else ''}.jsonl"
    argv = ["examine", "--questions", str(popqa(options)), "--limit", str(limit), "--out", str(transcript), "--fresh"]
    run_voirdire(options, [*argv, *(["--majority"] if majority else []), *model_args(options)])
    r, _ = report_file(transcript, report)
    assert isinstance(r, Report)
    return r


def table4(options: Options) -> Outcome:
    out = Outcome(notes=[paper_models_note(PAPER_MODELS, options)])
    for name, (p, rec, f1) in TABLE4_POPQA.items():
        r = _run(options, majority=name.endswith("(Majority)"))
        prf = r.reject_incorrect.pct() if r.reject_incorrect is not None else {}
        for label, printed, key in (("P", p, "P"), ("R", rec, "R"), ("F1", f1, "F1")):
            out.cells.append(Cell(f"PopQA {name} {label}", printed, prf.get(key)))
        out.charts += [
            replace(c, name=f"{c.name}-{slug(name)}", title=f"{name}: {c.title}") for c in lmvlm_charts([], r)
        ]
        out.details[name] = {"scored": r.scored, "claims_correct_pct": r.claims_correct_pct}
    out.notes.append(f"The first {options.limit or 20} PopQA long-tail questions (--limit); the paper samples 1,000.")
    return out


def table8(options: Options) -> Outcome:
    out = Outcome(notes=[paper_models_note(PAPER_MODELS, options)])
    r = _run(options, majority=False)
    stats = r.examination
    for key, (mean, sd) in TABLE8.items():
        got = getattr(stats, key).mean if stats is not None else None
        out.cells.append(Cell(f"Table 8 {key.replace('_', ' ')} (paper sd {sd})", mean, got))
    got_pct = stats.inconclusive_pct if stats is not None else None
    out.cells.append(Cell("Table 8 inconclusive examiner decisions (%)", TABLE8_INCONCLUSIVE, got_pct))
    out.notes.append("Table 8 averages over four datasets; this runs PopQA only.")
    return out


REPRODUCTIONS = (
    Reproduction(
        "lmvlm-table4-popqa",
        PAPER,
        "Table 4, PopQA: P/R/F1 of rejecting incorrect claims, LMvLM and Majority",
        "model",
        table4,
        tolerance="not judged: the paper's numbers are ChatGPT's",
        roles=("examiner", "examinee"),
        takes="minutes per 20 questions",
        example="voirdire reproduce lmvlm-table4-popqa --model '*=openai:gpt-3.5-turbo' --limit 100",
    ),
    Reproduction(
        "lmvlm-table8",
        PAPER,
        "Table 8: questions, follow-ups and inconclusive decisions per examination",
        "model",
        table8,
        tolerance="not judged: the paper's numbers are ChatGPT's",
        roles=("examiner", "examinee"),
        takes="minutes per 20 questions",
        example="voirdire reproduce lmvlm-table8 --model '*=openai:gpt-3.5-turbo' --limit 100",
    ),
)
