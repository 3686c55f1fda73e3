"""What DCR evaluates: a candidate against a reference (§2, "Problem Formulation"), with a human judgment when a
benchmark has one."""

from __future__ import annotations

import hashlib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .dce import Task


class DCRItem(BaseModel):
    """One reference R and one candidate C (a source article and a system summary; two questions of a pair)."""

    model_config = ConfigDict(extra="forbid")
    id: str
    reference: str = Field(min_length=1)
    candidate: str = Field(min_length=1)
    task: Task | None = Field(None, description="semantic or summarization; None: the protocol's --task")
    human: float | None = Field(None, description="the human judgment: a score (SummEval, QAGS) or a 0/1 label")
    dataset: str | None = None
    doc_id: str | None = Field(None, description="the source document, for summary-level correlation (SummEval)")
    system: str | None = None

    @classmethod
    def single(cls, reference: str, candidate: str, task: Task | None = None) -> DCRItem:
        """One pair given on the command line; its id comes from its texts, so another pair in the same
        transcript is a new session."""
        digest = hashlib.sha1(f"{reference}\x00{candidate}".encode()).hexdigest()[:8]
        return cls(id=f"pair-{digest}", reference=reference, candidate=candidate, task=task)


_FIELDS = {
    "reference": ("reference", "article", "source", "src", "sentence1", "question1", "true_answer"),
    "candidate": ("candidate", "summary", "system_output", "sys_summ", "sentence2", "question2", "attempt_answer"),
    "human": ("human", "score", "label", "consistency", "fact"),
}


def item_from_record(record: dict[str, Any]) -> DCRItem:
    """A DCR item from a JSONL/CSV/JSON record: ``reference`` and ``candidate`` (or the benchmarks' own names:
    article/summary, sentence1/sentence2, ...), optional ``id``, ``task``, ``human``, ``doc_id``, ``system``."""
    out: dict[str, Any] = {k: record[k] for k in ("task", "dataset", "doc_id", "system") if record.get(k)}
    for field, names in _FIELDS.items():
        value = next((record[n] for n in names if record.get(n) not in (None, "")), None)
        if value is not None:
            out[field] = float(value) if field == "human" else str(value)
    missing = [f for f in ("reference", "candidate") if f not in out]
    if missing:
        raise ValueError(f"needs {' and '.join(repr(m) for m in missing)} (has: {sorted(record)})")
    ident = record.get("id")
    if ident in (None, ""):
        ident = DCRItem.single(out["reference"], out["candidate"]).id
    return DCRItem.model_validate({"id": str(ident), **out})
