"""What LMvLM examines: a claim, or a question (or fill-in-the-blank query) the examinee answers with one (§4.1)."""

from __future__ import annotations

import hashlib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from voirdire.kit.data import as_list


class ClaimItem(BaseModel):
    """One thing to examine: a claim, or a question (or fill-in-the-blank query) the examinee answers with one."""

    model_config = ConfigDict(extra="forbid")
    id: str | None = None
    question: str | None = Field(
        None, description="the question the claim answers (or a fill-in-the-blank query with ____)"
    )
    claim: str | None = Field(None, description="the claim to examine")
    answers: list[str] = Field(default_factory=list, description="a gold answer or alias, if known")

    @model_validator(mode="after")
    def _needs_something(self) -> ClaimItem:
        for name in ("claim", "question"):
            value = getattr(self, name)
            if value is not None and not value.strip():  # whitespace would be examined, and could be accepted
                raise ValueError(f"{name} is empty (only whitespace)")
        if not (self.claim or self.question):
            raise ValueError("an item needs a claim or a question")
        return self

    @classmethod
    def single(cls, claim: str | None, question: str | None = None, answers: list[str] | None = None) -> ClaimItem:
        """One claim given on the command line or from a script; its id comes from its text, so examining another
        claim into the same transcript adds a session instead of being mistaken for a finished one."""
        digest = hashlib.sha1(f"{claim}\x00{question}".encode()).hexdigest()[:8]
        return cls(id=f"claim-{digest}", claim=claim, question=question, answers=answers or [])


# Field names used by the QA datasets of §4.1 (PopQA's possible_answers, LAMA's masked_sentence/obj_label, ...).
_FIELDS = {
    "id": ("id", "uid", "qid"),
    "question": ("question", "query", "masked_sentence"),
    "claim": ("claim",),
    "answers": ("answers", "possible_answers", "gold_answers", "answer", "obj_label"),
}


def claim_item_from_record(record: dict[str, Any]) -> ClaimItem:
    """A claim item from a JSONL/CSV record; answers may be a list, a JSON list string or ``a|b|c``."""
    out: dict[str, Any] = {}
    for field, names in _FIELDS.items():
        value = next((record[n] for n in names if record.get(n) not in (None, "")), None)
        if value is not None:
            out[field] = as_list(value) if field == "answers" else str(value)
    if not out.get("question") and not out.get("claim"):
        raise ValueError(f"needs a 'claim' or a 'question' field (has: {sorted(record)})")
    return ClaimItem.model_validate(out)
