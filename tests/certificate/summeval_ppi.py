"""SummEval with real (non-LLM) predictors: the mean expert consistency score of the 1,600 summaries, estimated by
prediction-powered inference from one of DCR's baselines (``protocols/dcr/baselines.py``: ROUGE-1, ROUGE-2 and
ROUGE-L (rougeLsum) against the 11 references, or the all-MiniLM-L6-v2 embedding similarity to the reference) on
every summary plus the expert scores of a random 200 (the others hidden), against the all-expert mean, over 100
seeds (0-99, ``draw_sample``).

    .venv/bin/python -m tests.certificate.summeval_ppi /work/shared/data/summeval/summeval_bartscore.json [METRIC ...]

prints the table of docs/certificate.md (every baseline by default; ROUGE over 1,600 summaries takes minutes).
"""

from __future__ import annotations

import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from voirdire.certificate import draw_sample, ppi_mean
from voirdire.protocols.dcr.baselines import METRICS, scorer
from voirdire.protocols.dcr.data import load_summeval

LABELS = 200
SEEDS = 100


@dataclass(frozen=True)
class Row:
    metric: str
    items: int
    human: float
    correlation: float  # Pearson r of the metric with the expert score
    ppi_covers: int
    classical_covers: int
    ppi_median_width: float
    classical_median_width: float


def summeval_row(path: Path, metric: str = "rouge-l", *, labels: int = LABELS, seeds: int = SEEDS) -> Row:
    examples = load_summeval(path)
    ids = [e.item.id for e in examples]
    prediction = np.array(scorer(metric)(examples), dtype=float)
    human = np.array([e.item.human for e in examples], dtype=float)
    truth = float(human.mean())
    index = {item_id: i for i, item_id in enumerate(ids)}
    covers = [0, 0]
    widths: tuple[list[float], list[float]] = ([], [])
    for seed in range(seeds):
        mask = np.zeros(len(ids), dtype=bool)
        mask[[index[i] for i in draw_sample(ids, labels, seed)]] = True
        est = ppi_mean(human[mask], prediction[mask], prediction[~mask])
        covers[0] += est.ppi.covers(truth)
        covers[1] += est.classical.covers(truth)
        widths[0].append(est.ppi.width)  # type: ignore[arg-type]
        widths[1].append(est.classical.width)  # type: ignore[arg-type]
    return Row(
        metric=metric, items=len(ids), human=truth, correlation=float(np.corrcoef(prediction, human)[0, 1]),
        ppi_covers=covers[0], classical_covers=covers[1],
        ppi_median_width=statistics.median(widths[0]), classical_median_width=statistics.median(widths[1]),
    )  # fmt: skip


def table(rows: list[Row], *, seeds: int = SEEDS, labels: int = LABELS) -> str:
    lines = [
        f"| predictor | summaries | all-expert mean consistency | Pearson r with experts | PPI covers / {seeds} "
        f"| classical covers / {seeds} | median width PPI | median width classical |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r.metric} | {r.items} | {r.human:.3f} | {r.correlation:.3f} | {r.ppi_covers} | {r.classical_covers} "
            f"| {r.ppi_median_width:.4f} | {r.classical_median_width:.4f} |"
        )
    note = f"(95% intervals on the 1–5 scale; {labels} expert scores per seed, seeds 0–{seeds - 1})"
    return "\n".join(lines) + "\n\n" + note


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else Path("/work/shared/data/summeval/summeval_bartscore.json")
    metrics = argv[1:] or list(METRICS)
    print(table([summeval_row(path, metric) for metric in metrics]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
