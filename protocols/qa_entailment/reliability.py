"""Reliability across seeds (App. A.2): statement consistency (BLEU, exact match; Table 4) and agreement of
entailment labels or hierarchy cells (pairwise Cohen's kappa; Tables 5–6).

Each run is the output of one seed over the same items in the same order, e.g. ``{0: [...], 1: [...]}``.

BLEU here is corpus-level BLEU-4 (Papineni et al. 2002: clipped n-gram precisions, geometric mean, brevity
penalty, no smoothing) on case-sensitive word/punctuation tokens, scaled to 0–100. For a pair of seeds it is the
mean of both directions (each run once as hypothesis), since BLEU's brevity penalty is not symmetric. The paper
does not say which BLEU implementation it used, so small differences from its Table 4 are expected.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from itertools import combinations

from pydantic import BaseModel

from voirdire.kit.reports import cohen_kappa

_TOKEN = re.compile(r"\w+|[^\w\s]")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _ngrams(tokens: list[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str], max_n: int = 4) -> float:
    """Corpus BLEU (0–100) of hypotheses against one reference each."""
    if len(hypotheses) != len(references):
        raise ValueError(f"length mismatch: {len(hypotheses)} hypotheses vs {len(references)} references")
    if not hypotheses:
        raise ValueError("no sentences")
    matches = [0] * max_n
    totals = [0] * max_n
    hyp_len = ref_len = 0
    for hyp, ref in zip(hypotheses, references, strict=True):
        h, r = _tokens(hyp), _tokens(ref)
        hyp_len += len(h)
        ref_len += len(r)
        for n in range(1, max_n + 1):
            hyp_ngrams, ref_ngrams = _ngrams(h, n), _ngrams(r, n)
            matches[n - 1] += sum((hyp_ngrams & ref_ngrams).values())
            totals[n - 1] += sum(hyp_ngrams.values())
    if hyp_len == 0 or any(m == 0 for m in matches):
        return 0.0
    log_precision = sum(math.log(m / t) for m, t in zip(matches, totals, strict=True)) / max_n
    brevity = 1.0 if hyp_len > ref_len else math.exp(1 - ref_len / hyp_len)
    return 100 * brevity * math.exp(log_precision)


def exact_match_rate(a: Sequence[str], b: Sequence[str]) -> float:
    """Share (0–1) of items whose statements are identical after trimming surrounding whitespace."""
    if len(a) != len(b) or not a:
        raise ValueError("exact match needs two non-empty, aligned lists")
    return sum(1 for x, y in zip(a, b, strict=True) if x.strip() == y.strip()) / len(a)


def _pair_name(s: Hashable, t: Hashable) -> str:
    return f"{s} vs {t}"


def pairwise_kappa(runs: Mapping[Hashable, Sequence[Hashable]]) -> dict[str, float]:
    """Cohen's kappa for every pair of seeds, keyed like Tables 5–6 ("0 vs 1")."""
    if len(runs) < 2:
        raise ValueError("need at least two runs")
    return {_pair_name(s, t): cohen_kappa(runs[s], runs[t]) for s, t in combinations(runs, 2)}


class StatementAgreement(BaseModel):
    """Table 4: mean ± population standard deviation over seed pairs (exact match as a percentage)."""

    bleu_mean: float
    bleu_std: float
    exact_match_mean: float
    exact_match_std: float
    pairs: dict[str, dict[str, float]]


def statement_agreement(runs: Mapping[Hashable, Sequence[str]]) -> StatementAgreement:
    """Pairwise BLEU and exact match of the statements that different seeds produced for the same items."""
    if len(runs) < 2:
        raise ValueError("need at least two runs")
    pairs: dict[str, dict[str, float]] = {}
    for s, t in combinations(runs, 2):
        bleu = (corpus_bleu(runs[s], runs[t]) + corpus_bleu(runs[t], runs[s])) / 2
        pairs[_pair_name(s, t)] = {"bleu": bleu, "exact_match": 100 * exact_match_rate(runs[s], runs[t])}
    bleus = [p["bleu"] for p in pairs.values()]
    ems = [p["exact_match"] for p in pairs.values()]
    return StatementAgreement(
        bleu_mean=statistics.fmean(bleus),
        bleu_std=statistics.pstdev(bleus),
        exact_match_mean=statistics.fmean(ems),
        exact_match_std=statistics.pstdev(ems),
        pairs=pairs,
    )
