"""Transcripts compared pair by pair (``voirdire compare``'s paired tests): each run read as ``calibrate`` reads
it (the attempt of each session that counts, its accept/reject and the gold the protocol records), every two
runs through ``paired_runs``."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path

from voirdire.analysis import By, CompareError, Comparison, compare_runs, compared_run, run_labels
from voirdire.certificate.calibration import Run, RunReading, read_run
from voirdire.certificate.intervals import DEFAULT_LEVEL, DEFAULT_SEED
from voirdire.certificate.paired import PairedRuns, paired_runs


def sessions_by_item(run: Run) -> dict[str, list[tuple[bool, bool | None]]]:
    """Item id → its sessions' (accepted, gold accepted or None), sessions without accept/reject left out."""
    out: dict[str, list[tuple[bool, bool | None]]] = {}
    for s in run.judged():
        out.setdefault(s.item_id, []).append((bool(s.accepted), s.gold))
    return out


def paired_transcripts(
    paths: Sequence[str | Path], *, level: float = DEFAULT_LEVEL, seed: int = DEFAULT_SEED
) -> list[PairedRuns]:
    """Every two of the runs compared on their shared items, in the order given ([1] vs [2], [1] vs [3], …)."""
    return _pairs([sessions_by_item(read_run(p)) for p in paths], paths, level, seed)


def compare_and_pair(
    paths: Sequence[str | Path], *, by: By = "decision", level: float = DEFAULT_LEVEL, seed: int = DEFAULT_SEED
) -> tuple[Comparison, list[PairedRuns]]:
    """``voirdire compare``: the runs side by side (``voirdire.analysis.compare``) and every two paired
    (``paired_transcripts``), each run read in one pass over its file: its overview and its protocol's report,
    with ``calibrate``'s reading of it made alongside."""
    if len(paths) < 2:
        raise CompareError("compare: give two or more transcripts")
    runs, judged = [], []
    for path, label in zip(paths, run_labels(paths), strict=True):
        if not Path(path).is_file():
            raise CompareError(f"{path}: no such transcript")
        reading = RunReading(path)
        run, report = compared_run(path, label, alongside=[reading.fold()])
        reading.gold_from(report)
        runs.append(run)
        judged.append(sessions_by_item(reading.run()))
    return compare_runs(runs, by=by), _pairs(judged, paths, level, seed)


def _pairs(
    runs: Sequence[dict[str, list[tuple[bool, bool | None]]]], paths: Sequence[str | Path], level: float, seed: int
) -> list[PairedRuns]:
    names = [f"[{i + 1}] {p}" for i, p in enumerate(paths)]
    return [
        paired_runs(runs[i], runs[j], names=(names[i], names[j]), level=level, seed=seed)
        for i, j in itertools.combinations(range(len(runs)), 2)
    ]
