"""The report of a DCR transcript: what §4.3-4.5 measure, computed from the verdicts alone.

- scores: Ẑ of the original candidates (DCE-AMC, Tables 2-4) and of the final ones;
- Table 5: inconsistent candidates (Ẑ < 1), those corrected by RAI (Ẑ = 1 after improvement) and the consistency
  improvement rate, after the first round and after all rounds;
- Fig. 4: the share of candidates that are consistent after each round (a candidate stays as its last scored
  round left it), and the frequency distribution of the scores after each round (Fig. 4 right);
- the correlation of the original candidates' Ẑ with the human judgment, when the items carry one (Tables 2-4,
  computed as ``correlation.py`` explains for the items' benchmark).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field

from voirdire.report import Report, counts
from voirdire.transcript import SessionRecord, Transcript

from .correlation import Correlation, Kind, correlate
from .data import KIND


class Improvement(BaseModel):
    """Table 5: candidates found inconsistent, corrected by RAI, and the rate."""

    inconsistent: int
    corrected: int
    rate: float | None


class DCRReport(Report):
    scored: int = 0
    unscored: int = 0
    mean_initial_score: float | None = None
    mean_final_score: float | None = None
    consistent_initial: int = 0
    first_round: Improvement | None = None
    all_rounds: Improvement | None = None
    consistent_after_round: list[float] = Field(default_factory=list)
    score_distribution: list[dict[str, int]] = Field(
        default_factory=list, description="per round, how many candidates score in each bin (Fig. 4 right)"
    )
    stopped: dict[str, int] = Field(default_factory=dict)
    correlation: Correlation | None = None
    correlation_dataset: str | None = None
    rows: list[dict[str, Any]] = Field(default_factory=list)

    def text(self) -> str:
        lines = self.summary_lines()
        lines.append(f"scored {self.scored}, unscored {self.unscored}; stopped: {_pairs(self.stopped)}")
        if self.mean_initial_score is not None:
            lines.append(
                f"mean score (Eq. 3): original {self.mean_initial_score:.3f}, final {self.mean_final_score:.3f}; "
                f"consistent at first evaluation {self.consistent_initial}/{self.scored}"
            )
        for label, imp in (("after round 1", self.first_round), ("after all rounds", self.all_rounds)):
            if imp is not None and imp.inconsistent:
                rate = f"{100 * imp.rate:.2f}%" if imp.rate is not None else "-"
                lines.append(
                    f"Table 5 {label}: inconsistent {imp.inconsistent}, corrected {imp.corrected}, "
                    f"improvement rate {rate}"
                )
        if len(self.consistent_after_round) > 1:
            shares = ", ".join(f"r{r} {100 * s:.1f}%" for r, s in enumerate(self.consistent_after_round))
            lines.append(f"Fig. 4 consistent after each round: {shares}")
        for r, bins in enumerate(self.score_distribution):
            lines.append(f"  scores after round {r}: " + ", ".join(f"{k} {v}" for k, v in bins.items()))
        if self.correlation is not None:
            lines.append(f"correlation with human ({self.correlation_dataset}): {self.correlation.text()}")
        return "\n".join(lines)


def _pairs(c: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(c.items())) or "-"


BINS = ((0.25, "[0,.25)"), (0.5, "[.25,.5)"), (0.75, "[.5,.75)"), (1.0, "[.75,1)"))


def histogram(scores: list[float]) -> dict[str, int]:
    """Scores in the bins of Fig. 4 (right), 1.0 (consistent) apart."""
    out = {label: 0 for _, label in BINS} | {"1": 0}
    for x in scores:
        out[next((label for upper, label in BINS if x < upper), "1")] += 1
    return out


def _improvement(pairs: list[tuple[float, float | None]]) -> Improvement:
    inconsistent = [after for before, after in pairs if before < 1]
    corrected = sum(after == 1 for after in inconsistent)
    return Improvement(
        inconsistent=len(inconsistent),
        corrected=corrected,
        rate=corrected / len(inconsistent) if inconsistent else None,
    )


def dataset_kind(sessions: list[SessionRecord]) -> tuple[str | None, Kind | None]:
    """The benchmark the items came from and how it is correlated (a file of items: binary when every human
    judgment is 0/1, summary level when documents repeat, else sample level)."""
    names = {s.item.get("dataset") for s in sessions}
    name = names.pop() if len(names) == 1 else None
    if name in KIND:
        return name, KIND[name]
    humans = [s.item.get("human") for s in sessions if s.item.get("human") is not None]
    if len(humans) < 2:
        return name, None
    if set(humans) <= {0.0, 1.0}:
        return name, "binary"
    docs = [s.item.get("doc_id") for s in sessions]
    if all(docs) and len(set(docs)) < len(docs):
        return name, "summary"
    return name, "sample"


def human_correlation(
    sessions: list[SessionRecord], score: str = "initial_score"
) -> tuple[str | None, Correlation | None]:
    """The correlation of a verdict statistic (the original candidates' Ẑ by default) with the human judgments."""
    name, kind = dataset_kind(sessions)
    rows = [
        (s.item.get("doc_id") or s.item_id, float(s.verdict.statistics[score]), float(s.item["human"]))
        for s in sessions
        if s.verdict is not None and s.verdict.statistics.get(score) is not None and s.item.get("human") is not None
    ]
    if kind is None or len(rows) < 2:
        return name, None
    docs, metric, human = zip(*rows, strict=True)
    return name, correlate(kind, metric, human, docs)


def score(sessions: Iterable[SessionRecord], protocol: str = "dcr") -> DCRReport:
    sessions = list(sessions)
    done = [s for s in sessions if s.verdict is not None]
    stats = [s.verdict.statistics for s in done if s.verdict is not None]
    scored = [st for st in stats if st.get("initial_score") is not None]
    rounds = max((len(st.get("scores", [])) for st in scored), default=0)
    after: list[float] = []
    distribution: list[dict[str, int]] = []
    for r in range(rounds):
        last = [[x for x in st["scores"][: r + 1] if x is not None][-1] for st in scored]
        after.append(sum(x == 1 for x in last) / len(last))
        distribution.append(histogram(last))
    name, corr = human_correlation(done)
    first = [(st["initial_score"], st["scores"][1] if len(st["scores"]) > 1 else st["initial_score"]) for st in scored]
    return DCRReport(
        protocol=protocol,
        **counts(sessions),  # type: ignore[arg-type]
        scored=len(scored),
        unscored=len(stats) - len(scored),
        mean_initial_score=sum(st["initial_score"] for st in scored) / len(scored) if scored else None,
        mean_final_score=sum(st["score"] for st in scored) / len(scored) if scored else None,
        consistent_initial=sum(st["initial_score"] == 1 for st in scored),
        first_round=_improvement(first) if scored else None,
        all_rounds=_improvement([(st["initial_score"], st["score"]) for st in scored]) if scored else None,
        consistent_after_round=after,
        score_distribution=distribution,
        stopped=dict(Counter(st.get("stopped", "?") for st in stats)),
        correlation=corr,
        correlation_dataset=name,
        rows=[
            {
                "id": s.item_id,
                "decision": s.verdict.decision if s.verdict else None,
                "scores": s.verdict.statistics.get("scores") if s.verdict else None,
                "human": s.item.get("human"),
            }
            for s in sessions
        ],
    )


def report(transcript: Transcript) -> DCRReport:
    """The report of a DCR transcript (``voirdire report``)."""
    r = score(transcript.sessions.values())
    r.transcript = transcript.path
    return r
