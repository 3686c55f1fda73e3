"""Token-level F1 between a system answer and gold answers (SQuAD definition; Bulian et al. 2022 formalise it).

Used two ways: as a continuous score (the paper's Table 3 / Table 13 "F1 Score" AUROC baseline) and, with a
threshold, as a binary evaluator for ``qa-eval --evaluator f1``. The paper gives no threshold; 0.5 is our
default and is a parameter everywhere.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from .lexical import normalize_answer

DEFAULT_F1_THRESHOLD = 0.5


def token_f1(answer: str, gold: str) -> float:
    """F1 of the bags of normalised tokens. If either side has no tokens, 1.0 when both are empty, else 0.0."""
    answer_tokens = normalize_answer(answer).split()
    gold_tokens = normalize_answer(gold).split()
    if not answer_tokens or not gold_tokens:
        return float(answer_tokens == gold_tokens)
    common = Counter(answer_tokens) & Counter(gold_tokens)
    overlap = sum(common.values())
    if overlap == 0:
        return 0.0
    precision = overlap / len(answer_tokens)
    recall = overlap / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def max_token_f1(answer: str, gold_answers: Iterable[str]) -> float:
    """Best token F1 over the gold answers (0.0 when there are none)."""
    return max((token_f1(answer, gold) for gold in gold_answers), default=0.0)


def f1_judgment(answer: str, gold_answers: Iterable[str], threshold: float = DEFAULT_F1_THRESHOLD) -> bool:
    """Binary evaluator: judged correct iff the best token F1 reaches ``threshold``."""
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be in [0, 1], got {threshold}")
    return max_token_f1(answer, gold_answers) >= threshold
