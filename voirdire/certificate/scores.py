"""Verdicts that carry a score (DCR's Ẑ, QA grading's token F1) against human labels: how well the score ranks
the items people accept above those they reject (AUROC, scikit-learn's ``roc_auc_score`` through
``voirdire.reports.auroc``, with a bootstrap interval over items), and whether the score reads as a probability
(the reliability diagram: the items binned by score, each bin's mean score against the share people accept)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from voirdire.certificate.intervals import DEFAULT_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED, Interval, bootstrap_items

BINS = 10  # equal-width bins of [0, 1] in the reliability diagram

Scored = tuple[float, bool]  # (the verdict's score, people accept) of one session


class ReliabilityBin(BaseModel):
    low: float
    high: float
    sessions: int
    mean_score: float
    accepted: float  # share of these sessions that people accept


class ScoreAgreement(BaseModel):
    statistic: str  # the verdict statistic read as the score
    sessions: int
    auroc: Interval
    bins: list[ReliabilityBin]  # empty where a score leaves [0, 1]: not a probability to calibrate
    why_no_bins: str | None = None

    def text(self) -> str:
        lines = [f"  AUROC of the score ({self.statistic})  {self.auroc.text()}"]
        if not self.bins:
            lines.append(f"  reliability: not drawn ({self.why_no_bins})")
            return "\n".join(lines)
        lines.append("  reliability (score bin: sessions, mean score, share people accept):")
        lines += [f"    [{b.low:.1f}, {b.high:.1f}{']' if b.high == 1 else ')'}: {b.sessions:>5}, {b.mean_score:.3f}, "
                  f"{100 * b.accepted:.1f}%" for b in self.bins]  # fmt: skip
        return "\n".join(lines)


def score_agreement(
    statistic: str, groups: Sequence[Sequence[Scored]], *, level: float = DEFAULT_LEVEL, seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> ScoreAgreement:
    """AUROC and reliability of the score; ``groups``: one list of (score, people accept) per item (its sessions)."""
    from voirdire.reports import auroc

    groups = [g for g in groups if g]
    flat = [x for g in groups for x in g]

    def area(pairs: list[Scored]) -> float:
        return auroc([y for _, y in pairs], [s for s, _ in pairs])

    interval = bootstrap_items("AUROC", groups, area, level=level, seed=seed, resamples=resamples)
    if any(not 0 <= s <= 1 for s, _ in flat):
        return ScoreAgreement(statistic=statistic, sessions=len(flat), auroc=interval, bins=[],
                              why_no_bins="scores outside [0, 1] are not probabilities")  # fmt: skip
    bins = []
    for k in range(BINS):
        low, high = k / BINS, (k + 1) / BINS
        inside = [(s, y) for s, y in flat if low <= s < high or (k == BINS - 1 and s == 1)]
        if inside:
            bins.append(ReliabilityBin(low=low, high=high, sessions=len(inside),
                                       mean_score=sum(s for s, _ in inside) / len(inside),
                                       accepted=sum(y for _, y in inside) / len(inside)))  # fmt: skip
    return ScoreAgreement(statistic=statistic, sessions=len(flat), auroc=interval, bins=bins)
