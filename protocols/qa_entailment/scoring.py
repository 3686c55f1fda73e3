"""Scoring graders against human judgments, per QA system (Table 1, Tables 9–10, Tables 3/13).

Table 1's metrics follow Wang et al. 2023: F1 with "judged correct" as the positive class, and accuracy, of the
evaluator's judgments against EVOUNA's human judgments. Items without a human judgment are not scored. An
undetermined entailment judgment (unreadable model replies) is counted as "judged incorrect" so every judged
item is scored, and the count is reported next to the scores.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Protocol

from pydantic import BaseModel

from voirdire.kit.reports import accuracy, auroc, precision_recall_f1

from .data import QAItem
from .hierarchy import HierarchyCell, hierarchy_counts
from .lexical import lexical_match
from .token_f1 import DEFAULT_F1_THRESHOLD, f1_judgment, max_token_f1


class BinaryScores(BaseModel):
    """Confusion counts and scores of binary judgments against human judgments ("judged correct" = positive)."""

    n: int
    tp: int
    fp: int
    fn: int
    tn: int
    precision: float
    recall: float
    f1: float
    accuracy: float


def binary_scores(predicted: Sequence[bool], reference: Sequence[bool]) -> BinaryScores:
    if not reference:
        raise ValueError("no judgments to score")
    prf = precision_recall_f1(reference, predicted)
    tp = prf.tp
    fp = prf.predicted - tp
    fn = prf.support - tp
    return BinaryScores(
        n=len(reference),
        tp=tp,
        fp=fp,
        fn=fn,
        tn=len(reference) - tp - fp - fn,
        precision=prf.precision,
        recall=prf.recall,
        f1=prf.f1,
        accuracy=accuracy(reference, predicted),
    )


class SystemReport(BaseModel):
    system: str
    n_items: int
    n_scored: int  # items with a human judgment
    n_undetermined: int  # scored items the evaluator could not decide (counted as judged incorrect)
    scores: BinaryScores | None  # None when no item has a human judgment
    hierarchy: dict[str, int] | None = None  # entailment evaluator only (Tables 9–10)


def lexical_judgments(items: Sequence[QAItem], *, skip_empty_gold: bool = False) -> list[bool]:
    return [lexical_match(it.system_answer, it.gold_answers, skip_empty_gold=skip_empty_gold) for it in items]


def f1_judgments(items: Sequence[QAItem], *, threshold: float = DEFAULT_F1_THRESHOLD) -> list[bool]:
    return [f1_judgment(it.system_answer, it.gold_answers, threshold) for it in items]


class SystemItem(Protocol):
    """An item as the per-system scores see it (a ``QAItem`` is one)."""

    @property
    def system(self) -> str: ...
    @property
    def human_judgment(self) -> bool | None: ...


def system_reports(
    items: Sequence[SystemItem],
    judgments: Sequence[bool | None],
    cells: Sequence[HierarchyCell | None] | None = None,
) -> dict[str, SystemReport]:
    """Per-system scores of ``judgments`` (aligned with ``items``) against the items' human judgments, with
    hierarchy counts when ``cells`` are given. Systems appear in order of first occurrence."""
    if len(judgments) != len(items) or (cells is not None and len(cells) != len(items)):
        raise ValueError("items, judgments and cells must be aligned")
    by_system: dict[str, list[int]] = {}
    for i, item in enumerate(items):
        by_system.setdefault(item.system, []).append(i)
    reports = {}
    for system, indices in by_system.items():
        scored = [i for i in indices if items[i].human_judgment is not None]
        predicted = [bool(judgments[i]) for i in scored]  # None (undetermined) -> judged incorrect
        reference = [bool(items[i].human_judgment) for i in scored]
        reports[system] = SystemReport(
            system=system,
            n_items=len(indices),
            n_scored=len(scored),
            n_undetermined=sum(1 for i in scored if judgments[i] is None),
            scores=binary_scores(predicted, reference) if scored else None,
            hierarchy=hierarchy_counts(cells[i] for i in indices) if cells is not None else None,
        )
    return reports


class AurocReport(BaseModel):
    scheme: str
    auroc: float | None  # None when the scored answers hold only one human label
    n: int  # answers ranked
    n_left_out: int  # answers without a ranking score (undetermined cell or unreadable partial mark)


class RankedAnswer(Protocol):
    """A graded answer as the AUROCs see it (``graded.GradedItem`` is one)."""

    @property
    def system_answer(self) -> str: ...
    @property
    def gold_answers(self) -> Sequence[str]: ...
    @property
    def human_judgment(self) -> bool | None: ...
    @property
    def ranking_scores(self) -> Mapping[str, float | None]: ...


def partial_mark_aurocs(graded: Sequence[RankedAnswer]) -> dict[str, AurocReport]:
    """AUROC of each partial-mark scheme's ranking score in predicting human judgments (Tables 3 and 13), plus
    the model-free "F1 Score" baseline (best token F1 against the gold answers)."""
    judged = [g for g in graded if g.human_judgment is not None]
    return scheme_aurocs(
        [(g.ranking_scores, max_token_f1(g.system_answer, g.gold_answers), bool(g.human_judgment)) for g in judged]
    )


def scheme_aurocs(judged: Sequence[tuple[Mapping[str, float | None], float, bool]]) -> dict[str, AurocReport]:
    """``partial_mark_aurocs`` of answers with a human judgment, each given as its ranking scores, its best token
    F1 and the judgment: what a report keeps per answer instead of the answer itself."""
    schemes = sorted({s for ranking, _, _ in judged for s in ranking})
    out = {}
    for scheme in [*schemes, "token_f1"]:
        labels: list[bool] = []  # two lists, not a pair per answer: a report may rank many thousands
        scores: list[float] = []
        for ranking, token_f1, human in judged:
            score = token_f1 if scheme == "token_f1" else ranking.get(scheme)
            if score is not None:
                scores.append(score)
                labels.append(human)
        value = auroc(labels, scores) if scores else math.nan
        value = None if math.isnan(value) else value  # one human label only: AUROC undefined
        out[scheme] = AurocReport(scheme=scheme, auroc=value, n=len(scores), n_left_out=len(judged) - len(scores))
    return out
