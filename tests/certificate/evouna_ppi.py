"""EVOUNA NQ on real data with a real (non-LLM) judge: the share of each QA system's answers that people judge
correct, estimated by prediction-powered inference from the lexical-match evaluator's verdicts on every answer
plus the human judgments of a random 200 (the other judgments hidden), against the all-human value.

This is what ``voirdire calibrate T --sample 200 --seed S`` computes on a ``qa_lexical`` run over NQ.json, done
for 100 seeds per system without writing 100 transcripts: the verdicts are the lexical evaluator's
(``protocols/qa_entailment/lexical.py``), the sample ``voirdire.certificate.draw_sample``'s, the estimate
``voirdire.certificate.ppi_mean``'s.

    .venv/bin/python -m tests.certificate.evouna_ppi /work/shared/data/evouna/NQ.json

prints the table of docs/certificate.md.
"""

from __future__ import annotations

import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from voirdire.certificate import PPIEstimate, draw_sample, ppi_mean
from voirdire.protocols.qa_entailment.data import EVOUNA_SYSTEM_NAMES, EVOUNA_SYSTEMS, load_evouna
from voirdire.protocols.qa_entailment.lexical import lexical_match

LABELS = 200
SEEDS = 100


@dataclass(frozen=True)
class SystemRow:
    system: str
    items: int
    human: float  # the all-human share judged correct
    naive: float  # the lexical evaluator's share over every answer
    evaluator_accuracy: float  # lexical verdicts that agree with people (Table 1's Acc)
    ppi_covers: int
    classical_covers: int
    ppi_median_width: float
    classical_median_width: float
    ppi_median_error: float  # median |PPI estimate − all-human value|
    classical_median_error: float


def judged(path: Path, system: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    """One system's answers: their ids, the lexical verdicts and the human judgments (1 = correct)."""
    items = load_evouna(path, systems=[system])
    verdict = np.array([lexical_match(it.system_answer, it.gold_answers) for it in items], dtype=float)
    human = np.array([bool(it.human_judgment) for it in items], dtype=float)
    return [it.id for it in items], verdict, human


def estimate(ids: list[str], verdict: np.ndarray, human: np.ndarray, seed: int, labels: int = LABELS) -> PPIEstimate:
    """The estimate from the human judgments of the sample ``seed`` draws and the verdicts on the other items."""
    index = {item_id: i for i, item_id in enumerate(ids)}
    mask = np.zeros(len(ids), dtype=bool)
    mask[[index[i] for i in draw_sample(ids, labels, seed)]] = True
    return ppi_mean(human[mask], verdict[mask], verdict[~mask])


def estimate_for_seed(path: Path, system: str, seed: int) -> PPIEstimate:
    return estimate(*judged(path, system), seed)


def system_row(path: Path, system: str, *, labels: int = LABELS, seeds: int = SEEDS) -> SystemRow:
    ids, verdict, human = judged(path, system)
    truth = float(human.mean())
    ppi_cover = classical_cover = 0
    widths: tuple[list[float], list[float]] = ([], [])
    errors: tuple[list[float], list[float]] = ([], [])
    for seed in range(seeds):
        est = estimate(ids, verdict, human, seed, labels)
        ppi_cover += est.ppi.covers(truth)
        classical_cover += est.classical.covers(truth)
        widths[0].append(est.ppi.width)  # type: ignore[arg-type]
        widths[1].append(est.classical.width)  # type: ignore[arg-type]
        errors[0].append(abs(est.ppi.estimate - truth))  # type: ignore[operator]
        errors[1].append(abs(est.classical.estimate - truth))  # type: ignore[operator]
    return SystemRow(
        system=system,
        items=len(ids),
        human=truth,
        naive=float(verdict.mean()),
        evaluator_accuracy=float((verdict == human).mean()),
        ppi_covers=ppi_cover,
        classical_covers=classical_cover,
        ppi_median_width=statistics.median(widths[0]),
        classical_median_width=statistics.median(widths[1]),
        ppi_median_error=statistics.median(errors[0]),
        classical_median_error=statistics.median(errors[1]),
    )


def table(rows: list[SystemRow], *, seeds: int = SEEDS, labels: int = LABELS) -> str:
    head = (
        f"| System | answers | all-human share | lexical-only share (bias) | lexical accuracy | PPI covers / {seeds} "
        f"| classical covers / {seeds} | median width PPI | median width classical | median error PPI "
        "| median error classical |"
    )
    lines = [head, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        pp = 100  # percentage points
        lines.append(
            f"| {EVOUNA_SYSTEM_NAMES[r.system]} | {r.items} | {pp * r.human:.1f}% | {pp * r.naive:.1f}% "
            f"({pp * (r.naive - r.human):+.1f} pts) | {pp * r.evaluator_accuracy:.1f}% | {r.ppi_covers} "
            f"| {r.classical_covers} | {pp * r.ppi_median_width:.1f} pts | {pp * r.classical_median_width:.1f} pts "
            f"| {pp * r.ppi_median_error:.1f} pts | {pp * r.classical_median_error:.1f} pts |"
        )
    return "\n".join(lines) + f"\n\n(95% intervals; {labels} human labels per seed, seeds 0–{seeds - 1})"


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else Path("/work/shared/data/evouna/NQ.json")
    print(table([system_row(path, s) for s in EVOUNA_SYSTEMS]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
